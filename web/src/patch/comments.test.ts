import { describe, expect, it } from 'vitest';
import { parsePatch } from './lines.ts';
import {
  commentLine,
  extendRange,
  gutterLines,
  indexLines,
  inRange,
  placeUnderRows,
  rangeLabel,
  rowSideLines,
  selectRange,
  tabStopIn,
  type SideRange,
} from './comments.ts';
import { buildRows } from './rows.ts';

// Old file: a b c d e f g ... ; the run changed line 2 (b -> B), removed d and added X after e,
// then a second hunk far below.
const PATCH = [
  'diff --git a/f.ts b/f.ts',
  '--- a/f.ts',
  '+++ b/f.ts',
  '@@ -1,6 +1,6 @@',
  ' a',
  '-b',
  '+B',
  ' c',
  '-d',
  ' e',
  '+X',
  ' f',
  '@@ -40,3 +40,4 @@',
  ' p',
  '+q',
  ' r',
  ' s',
].join('\n');
const lines = parsePatch(PATCH);
const at = (text: string) => lines.findIndex((l) => l.text === text);

describe('commentLine: which side and line a gutter button comments on', () => {
  it('unified: a removed line is on the before side, added and unchanged lines on the after side', () => {
    expect(commentLine(lines[at('-b')]!, 'unified')).toEqual({ side: 'before', line: 2 });
    expect(commentLine(lines[at('+B')]!, 'unified')).toEqual({ side: 'after', line: 2 });
    // `c` is line 3 on both sides; unified shows its comment button on the after side.
    expect(commentLine(lines[at(' c')]!, 'unified')).toEqual({ side: 'after', line: 3 });
    expect(commentLine(lines[at('+X')]!, 'unified')).toEqual({ side: 'after', line: 5 });
    expect(commentLine(lines[at('-d')]!, 'unified')).toEqual({ side: 'before', line: 4 });
  });

  it('split: the left column is the before side (unchanged lines too), the right one the after side', () => {
    expect(commentLine(lines[at(' e')]!, 'old')).toEqual({ side: 'before', line: 5 });
    expect(commentLine(lines[at(' e')]!, 'new')).toEqual({ side: 'after', line: 4 });
    expect(commentLine(lines[at('-b')]!, 'new')).toBeNull();
    expect(commentLine(lines[at('+B')]!, 'old')).toBeNull();
  });

  it('headers, hunk lines and notes take no comment', () => {
    expect(commentLine(lines[0]!, 'unified')).toBeNull();
    expect(commentLine(lines[at('@@ -40,3 +40,4 @@')]!, 'unified')).toBeNull();
    const note = parsePatch('@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n');
    expect(commentLine(note[3]!, 'unified')).toBeNull();
    expect(commentLine(note[3]!, 'new')).toBeNull();
  });
});

describe('rowSideLines and indexLines: the row each side line is shown in', () => {
  it('a unified unchanged row shows both its numbers; a split pair one per side', () => {
    const unified = buildRows(lines, 'unified', new Set());
    const cRow = unified.findIndex((r) => r.kind === 'line' && r.index === at(' c'));
    expect(rowSideLines(unified[cRow]!, lines, 'unified')).toEqual([
      { side: 'before', line: 3 },
      { side: 'after', line: 3 },
    ]);
    const split = buildRows(lines, 'split', new Set());
    const pair = split.find((r) => r.kind === 'pair' && r.left === at('-b'))!;
    expect(rowSideLines(pair, lines, 'split')).toEqual([
      { side: 'before', line: 2 },
      { side: 'after', line: 2 },
    ]);
  });

  it('maps each side line to its hunk and its row, in both layouts', () => {
    for (const layout of ['unified', 'split'] as const) {
      const rows = buildRows(lines, layout, new Set());
      const index = indexLines(lines, rows, layout);
      expect(index.hunkOf.get('after:2')).toBe(0);
      expect(index.hunkOf.get('after:41')).toBe(1);
      const row = rows[index.rowOf.get('before:4')!]!;
      const shown = rowSideLines(row, lines, layout);
      expect(shown).toContainEqual({ side: 'before', line: 4 });
    }
  });

  it('a folded line has no row (its comments are listed apart)', () => {
    const body = Array.from({ length: 20 }, (_, i) => ` l${i + 1}`);
    const long = parsePatch(['@@ -1,22 +1,22 @@', '-x', '+y', ...body, '-z', '+w'].join('\n'));
    const rows = buildRows(long, 'unified', new Set());
    const index = indexLines(long, rows, 'unified');
    expect(index.rowOf.has('after:10')).toBe(false);
    expect(index.rowOf.has('after:2')).toBe(true);
    const { byRow, unplaced } = placeUnderRows(index, ['folded', 'shown'], (s) =>
      s === 'folded' ? { side: 'after', start: 9, end: 10 } : { side: 'after', start: 2, end: 2 },
    );
    expect(unplaced).toEqual(['folded']);
    expect([...byRow.values()]).toEqual([['shown']]);
  });
});

describe('selectRange: click, shift-click and drag over the gutter', () => {
  const rows = buildRows(lines, 'unified', new Set());
  const index = indexLines(lines, rows, 'unified');

  it('spans from the anchor to the line reached, either direction', () => {
    expect(selectRange(index, { side: 'after', line: 2 }, { side: 'after', line: 5 }, 200)).toEqual({
      side: 'after',
      start: 2,
      end: 5,
    });
    expect(selectRange(index, { side: 'after', line: 5 }, { side: 'after', line: 1 }, 200)).toEqual({
      side: 'after',
      start: 1,
      end: 5,
    });
  });

  it('a line on the other side or in another hunk starts a new one-line range there', () => {
    expect(selectRange(index, { side: 'after', line: 2 }, { side: 'before', line: 4 }, 200)).toEqual({
      side: 'before',
      start: 4,
      end: 4,
    });
    expect(selectRange(index, { side: 'after', line: 2 }, { side: 'after', line: 41 }, 200)).toEqual({
      side: 'after',
      start: 41,
      end: 41,
    });
  });

  it('is cut at the most lines a comment may cover, on the far side of the anchor', () => {
    expect(selectRange(index, { side: 'after', line: 1 }, { side: 'after', line: 6 }, 3)).toEqual({
      side: 'after',
      start: 1,
      end: 3,
    });
    expect(selectRange(index, { side: 'after', line: 6 }, { side: 'after', line: 1 }, 3)).toEqual({
      side: 'after',
      start: 4,
      end: 6,
    });
    // Within the bound nothing is cut (the control).
    expect(selectRange(index, { side: 'after', line: 1 }, { side: 'after', line: 3 }, 3).end).toBe(3);
  });

  it('inRange and rangeLabel', () => {
    const r: SideRange = { side: 'before', start: 2, end: 4 };
    expect(inRange(r, { side: 'before', line: 4 })).toBe(true);
    expect(inRange(r, { side: 'after', line: 3 })).toBe(false);
    expect(inRange(r, { side: 'before', line: 5 })).toBe(false);
    expect(inRange(null, { side: 'before', line: 3 })).toBe(false);
    expect(rangeLabel(r)).toBe('lines 2-4 (before)');
    expect(rangeLabel({ side: 'after', start: 7, end: 7 })).toBe('line 7 (after)');
  });
});

describe('the gutter buttons of rows, and the one Tab reaches', () => {
  const unified = buildRows(lines, 'unified', new Set());
  const split = buildRows(lines, 'split', new Set());

  it('gives a unified line one button and a split pair one per side', () => {
    const row = unified.findIndex((r) => r.kind === 'line' && r.index === at(' c'));
    expect(gutterLines(unified[row]!, lines, 'unified')).toEqual([{ side: 'after', line: 3 }]);
    const pair = split.find((r) => r.kind === 'pair' && r.left === at('-b'))!;
    expect(gutterLines(pair, lines, 'split')).toEqual([
      { side: 'before', line: 2 },
      { side: 'after', line: 2 },
    ]);
    // A header row has none.
    expect(gutterLines(unified[0]!, lines, 'unified')).toEqual([]);
  });

  it('keeps the last focused button while its block is rendered, else the first rendered one', () => {
    const blocks = [unified.slice(0, 6), unified.slice(6)];
    expect(tabStopIn([0, 1], blocks, lines, 'unified', 'after:41')).toEqual({ key: 'after:41', block: 1 });
    expect(tabStopIn([0, 1], blocks, lines, 'unified', null)).toEqual({ key: 'after:1', block: 0 });
    // Block 0 is out of the window: the first button of block 1 takes the tab stop.
    expect(tabStopIn([1], blocks, lines, 'unified', 'after:1')?.block).toBe(1);
    expect(tabStopIn([], blocks, lines, 'unified', null)).toBeNull();
  });
});

describe('extendRange: shift-click from the last clicked line', () => {
  const index = indexLines(lines, buildRows(lines, 'unified', new Set()), 'unified');

  it('extends on the same side within the hunk, capped', () => {
    expect(extendRange(index, { side: 'after', line: 1 }, { side: 'after', line: 4 }, 10)).toEqual({
      side: 'after',
      start: 1,
      end: 4,
    });
    expect(extendRange(index, { side: 'after', line: 1 }, { side: 'after', line: 5 }, 2)).toEqual({
      side: 'after',
      start: 1,
      end: 2,
    });
  });

  it('does not extend from nothing, to the other side or into another hunk', () => {
    expect(extendRange(index, null, { side: 'after', line: 3 }, 10)).toBeNull();
    expect(extendRange(index, { side: 'after', line: 1 }, { side: 'before', line: 2 }, 10)).toBeNull();
    expect(extendRange(index, { side: 'after', line: 1 }, { side: 'after', line: 41 }, 10)).toBeNull();
  });
});
