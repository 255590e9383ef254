import { describe, expect, it } from 'vitest';
import { parsePatch, type PatchLine } from './lines.ts';
import {
  clickUndoLine,
  hunkOfLine,
  remapUndoSelection,
  undoBodyIndexes,
  undoSelectable,
  undoSelectionLabel,
  undoTabStops,
} from './undo-lines.ts';

// Display indexes: 0-2 meta, 3 header, 4 ' a', 5 '-b', 6 '+B', 7 '+B2', 8 ' c', 9 '-d', 10 note,
// 11 second header, 12 '-y', 13 '+Y'.
const PATCH = [
  'diff --git a/f.ts b/f.ts',
  '--- a/f.ts',
  '+++ b/f.ts',
  '@@ -1,4 +1,4 @@',
  ' a',
  '-b',
  '+B',
  '+B2',
  ' c',
  '-d',
  '\\ No newline at end of file',
  '@@ -20,1 +20,1 @@',
  '-y',
  '+Y',
].join('\n');
const lines = parsePatch(PATCH);

describe('picking lines of a hunk to undo', () => {
  it('only changed lines inside a hunk can be picked: not context, headers, notes or shown context', () => {
    expect([4, 5, 6, 8, 9, 10, 3, 0].map((i) => undoSelectable(lines, i))).toEqual([
      false,
      true,
      true,
      false,
      true,
      false,
      false,
      false,
    ]);
    const extra: PatchLine[] = [...lines.slice(0, 11), { kind: 'add', text: '+z', oldNo: null, newNo: 9, extra: true }];
    expect(undoSelectable(extra, 11)).toBe(false);
    expect(hunkOfLine(lines, 13)).toBe(11);
    expect(hunkOfLine(lines, 5)).toBe(3);
  });

  it('a click picks and unpicks one line; a click on context changes nothing', () => {
    let sel = clickUndoLine(lines, null, 6, false);
    expect(sel).toEqual({ hunk: 3, anchor: 6, lines: [6] });
    sel = clickUndoLine(lines, sel, 9, false);
    expect(sel!.lines).toEqual([6, 9]);
    expect(clickUndoLine(lines, sel, 8, false)).toBe(sel);
    sel = clickUndoLine(lines, sel, 6, false);
    expect(sel!.lines).toEqual([9]);
    expect(clickUndoLine(lines, sel, 9, false)).toBeNull();
  });

  it('a shift-click adds the changed lines from the anchor, either way, skipping context', () => {
    const down = clickUndoLine(lines, clickUndoLine(lines, null, 5, false), 9, true);
    expect(down!.lines).toEqual([5, 6, 7, 9]);
    const up = clickUndoLine(lines, clickUndoLine(lines, null, 9, false), 6, true);
    expect(up!.lines).toEqual([6, 7, 9]);
  });

  it('a selection stays within one hunk: a click or shift-click in another starts anew there', () => {
    const first = clickUndoLine(lines, null, 5, false);
    expect(clickUndoLine(lines, first, 13, true)).toEqual({ hunk: 11, anchor: 13, lines: [13] });
    expect(clickUndoLine(lines, first, 12, false)).toEqual({ hunk: 11, anchor: 12, lines: [12] });
  });

  it("names the picked lines by their index among the hunk's body lines, notes not counted", () => {
    expect(undoBodyIndexes(lines, { hunk: 3, anchor: 6, lines: [6, 7] })).toEqual([2, 3]);
    expect(undoBodyIndexes(lines, { hunk: 3, anchor: 9, lines: [5, 9] })).toEqual([1, 5]);
    expect(undoBodyIndexes(lines, { hunk: 11, anchor: 13, lines: [12, 13] })).toEqual([0, 1]);
  });

  it('says how many lines the button undoes', () => {
    expect(undoSelectionLabel(1)).toBe('Undo 1 selected line');
    expect(undoSelectionLabel(2)).toBe('Undo 2 selected lines');
  });
});

describe('a selection kept across what is shown', () => {
  it('follows its lines when context opens above them, and is dropped when one is gone', () => {
    const sel = { hunk: 11, anchor: 13, lines: [12, 13] };
    const extra: PatchLine = { kind: 'context', text: ' x', oldNo: 19, newNo: 19, extra: true };
    const opened = [...lines.slice(0, 11), extra, ...lines.slice(11)];
    expect(remapUndoSelection(lines, opened, sel)).toEqual({ hunk: 12, anchor: 14, lines: [13, 14] });
    expect(remapUndoSelection(lines, lines.slice(0, 13), sel)).toBeNull();
    expect(remapUndoSelection(lines, opened, null)).toBeNull();
  });

  it("Tab reaches each hunk's first changed line, or the selection's anchor in its hunk", () => {
    expect([...undoTabStops(lines, null)]).toEqual([5, 12]);
    expect([...undoTabStops(lines, { hunk: 3, anchor: 9, lines: [9] })]).toEqual([9, 12]);
  });
});
