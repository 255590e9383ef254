import type { PatchLine } from './lines.ts';

/**
 * Changed lines of one hunk picked to be undone (not a comment's range: those are side lines, these
 * are the patch's own `+`/`-` lines). `hunk` is the display index of the hunk's header, `anchor` the
 * line a shift-click extends from, `lines` the picked display indexes in patch order.
 */
export interface UndoSelection {
  hunk: number;
  anchor: number;
  lines: readonly number[];
}

/** The display index of the header of the hunk that line `index` is in, or -1 (a header, a note, outside every hunk). */
export function hunkOfLine(lines: readonly PatchLine[], index: number): number {
  for (let i = index; i >= 0; i--) {
    const line = lines[i];
    if (!line) return -1;
    if (line.kind === 'hunk') return i === index ? -1 : i;
    // Context shown from the recorded file lies between hunks, never inside one.
    if (line.extra || line.kind === 'meta') return -1;
  }
  return -1;
}

/** A line can be picked: a `+` or `-` line of a stored hunk (context lines are not undone alone). */
export const undoSelectable = (lines: readonly PatchLine[], index: number): boolean => {
  const kind = lines[index]?.kind;
  return (kind === 'add' || kind === 'del') && !lines[index]!.extra && hunkOfLine(lines, index) >= 0;
};

/**
 * The selection after a click on line `index`'s number: a click picks or unpicks that line, a
 * shift-click adds every changed line from the anchor to it. A click in another hunk starts a new
 * selection there (a selection is within one hunk); nothing left picked is null.
 */
export function clickUndoLine(
  lines: readonly PatchLine[],
  sel: UndoSelection | null,
  index: number,
  shift: boolean,
): UndoSelection | null {
  if (!undoSelectable(lines, index)) return sel;
  const hunk = hunkOfLine(lines, index);
  if (!sel || sel.hunk !== hunk) return { hunk, anchor: index, lines: [index] };
  const picked = new Set(sel.lines);
  if (shift) {
    const [from, to] = sel.anchor <= index ? [sel.anchor, index] : [index, sel.anchor];
    // Both ends are in the same hunk, so is every line between them.
    for (let i = from; i <= to; i++) if (lines[i]!.kind === 'add' || lines[i]!.kind === 'del') picked.add(i);
  } else if (picked.has(index)) picked.delete(index);
  else picked.add(index);
  if (picked.size === 0) return null;
  return { hunk, anchor: index, lines: [...picked].sort((a, b) => a - b) };
}

/**
 * The picked lines as the server counts them: each one's index among its hunk's body lines (0 = the
 * first line after the header; `\ No newline at end of file` marks are not counted).
 */
export function undoBodyIndexes(lines: readonly PatchLine[], sel: UndoSelection): number[] {
  const picked = new Set(sel.lines);
  const out: number[] = [];
  let body = 0;
  for (let i = sel.hunk + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.kind === 'hunk' || line.kind === 'meta' || line.extra) break;
    if (line.kind === 'note') continue;
    if (picked.has(i)) out.push(body);
    body++;
  }
  return out;
}

/** `Undo 2 selected lines`: the hunk header's button for a selection. */
export const undoSelectionLabel = (n: number): string => `Undo ${n} selected ${n === 1 ? 'line' : 'lines'}`;

/**
 * The same selection after the shown lines changed (context opened above it, the layout switched):
 * the patch's own lines keep their objects, so each picked line is found again; null when one is gone.
 */
export function remapUndoSelection(
  before: readonly PatchLine[],
  now: readonly PatchLine[],
  sel: UndoSelection | null,
): UndoSelection | null {
  if (!sel || before === now) return sel;
  const at = new Map<PatchLine, number>();
  now.forEach((line, i) => at.set(line, i));
  const find = (i: number) => at.get(before[i]!) ?? -1;
  const hunk = find(sel.hunk);
  const anchor = find(sel.anchor);
  const picked = sel.lines.map(find);
  if (hunk < 0 || anchor < 0 || picked.some((i) => i < 0)) return null;
  return { hunk, anchor, lines: picked };
}

/**
 * The line numbers Tab reaches (the arrow keys move between the others): the first changed line of
 * each hunk, or in the selection's hunk the line it was last extended from.
 */
export function undoTabStops(lines: readonly PatchLine[], sel: UndoSelection | null): Set<number> {
  const out = new Set<number>();
  let hunk = -1;
  lines.forEach((line, i) => {
    if (line.kind === 'hunk') hunk = i;
    else if (line.extra || line.kind === 'meta') hunk = -1;
    else if (hunk >= 0 && (line.kind === 'add' || line.kind === 'del')) {
      out.add(sel?.hunk === hunk ? sel.anchor : i);
      hunk = -1;
    }
  });
  return out;
}
