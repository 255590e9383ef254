import type { CommentSide } from '../../../shared/index.ts';
import type { PatchLine } from './lines.ts';
import type { PatchLayout, PatchRow } from './rows.ts';

/** One line of one side of a file: what a comment is anchored to. */
export interface SideLine {
  side: CommentSide;
  line: number;
}

/** Lines `start..end` (1-based, inclusive) of one side: a selection, a composer or an anchor. */
export interface SideRange {
  side: CommentSide;
  start: number;
  end: number;
}

/** Which gutter a line's comment button sits in: the unified layout's, or a split side's. */
export type GutterColumn = 'unified' | 'old' | 'new';

export const sideLineKey = (l: SideLine): string => `${l.side}:${l.line}`;

/**
 * The line a gutter button comments on, or null where there is nothing to comment (headers, notes,
 * the empty half of a split row). Unified: a removed line is on the before side, an added or
 * unchanged line on the after side (the file as the run left it). Split: the left column is the
 * before side, the right one the after side.
 */
export function commentLine(line: PatchLine, column: GutterColumn): SideLine | null {
  if (column === 'unified') {
    if (line.kind === 'del' && line.oldNo !== null) return { side: 'before', line: line.oldNo };
    if ((line.kind === 'add' || line.kind === 'context') && line.newNo !== null)
      return { side: 'after', line: line.newNo };
    return null;
  }
  if (column === 'old')
    return (line.kind === 'del' || line.kind === 'context') && line.oldNo !== null
      ? { side: 'before', line: line.oldNo }
      : null;
  return (line.kind === 'add' || line.kind === 'context') && line.newNo !== null
    ? { side: 'after', line: line.newNo }
    : null;
}

/** The side lines a display row shows (a unified unchanged line shows one of each side). */
export function rowSideLines(row: PatchRow, lines: readonly PatchLine[], layout: PatchLayout): SideLine[] {
  const out: SideLine[] = [];
  const add = (index: number | null, column: 'old' | 'new') => {
    if (index === null) return;
    const l = commentLine(lines[index]!, column);
    if (l) out.push(l);
  };
  if (row.kind === 'line') {
    // A unified row shows both numbers of an unchanged line; in split a `line` row is a header or note.
    if (layout === 'unified') {
      add(row.index, 'old');
      add(row.index, 'new');
    }
  } else if (row.kind === 'pair') {
    add(row.left, 'old');
    add(row.right, 'new');
  }
  return out;
}

/**
 * Where each side line of the patch is: its hunk (a range never spans two hunks: the lines between
 * them are not in the stored patch) and the display row that shows it.
 */
export interface LineIndex {
  /** `side:line` -> the hunk the line belongs to (counted from 0 in the patch's lines). */
  hunkOf: Map<string, number>;
  /** `side:line` -> the index of the row that shows it (absent while folded). */
  rowOf: Map<string, number>;
}

export function indexLines(lines: readonly PatchLine[], rows: readonly PatchRow[], layout: PatchLayout): LineIndex {
  const hunkOf = new Map<string, number>();
  let hunk = -1;
  for (const line of lines) {
    if (line.kind === 'hunk') hunk++;
    for (const column of ['old', 'new'] as const) {
      const l = commentLine(line, column);
      if (l) hunkOf.set(sideLineKey(l), Math.max(hunk, 0));
    }
  }
  const rowOf = new Map<string, number>();
  rows.forEach((row, r) => {
    for (const l of rowSideLines(row, lines, layout)) rowOf.set(sideLineKey(l), r);
  });
  return { hunkOf, rowOf };
}

/**
 * The range from `anchor` (where a click or drag began) to `to`, on the anchor's side and within its
 * hunk, at most `maxLines` long (cut on the far side of the anchor). A point on the other side or in
 * another hunk starts a new one-line range there.
 */
export function selectRange(index: LineIndex, anchor: SideLine, to: SideLine, maxLines: number): SideRange {
  const a = index.hunkOf.get(sideLineKey(anchor));
  const b = index.hunkOf.get(sideLineKey(to));
  if (to.side !== anchor.side || a === undefined || a !== b) return { side: to.side, start: to.line, end: to.line };
  if (to.line >= anchor.line)
    return { side: anchor.side, start: anchor.line, end: Math.min(to.line, anchor.line + maxLines - 1) };
  return { side: anchor.side, start: Math.max(to.line, anchor.line - maxLines + 1), end: anchor.line };
}

export const inRange = (r: SideRange | null, l: SideLine): boolean =>
  r !== null && r.side === l.side && l.line >= r.start && l.line <= r.end;

/** `line 12 (after)`, `lines 12-14 (before)`: how a range is named in labels and lists. */
export function rangeLabel(r: SideRange): string {
  return r.start === r.end ? `line ${r.start} (${r.side})` : `lines ${r.start}-${r.end} (${r.side})`;
}

/**
 * Puts each item (a comment, the open composer) under the row that shows the last line of its
 * range; items whose line is not shown (folded, outside the stored hunks, whitespace hidden) are
 * returned apart, to be listed above the patch rather than lost.
 */
export function placeUnderRows<T>(
  index: LineIndex,
  items: readonly T[],
  rangeOf: (item: T) => SideRange,
): { byRow: Map<number, T[]>; unplaced: T[] } {
  const byRow = new Map<number, T[]>();
  const unplaced: T[] = [];
  for (const item of items) {
    const r = rangeOf(item);
    const row = index.rowOf.get(sideLineKey({ side: r.side, line: r.end }));
    if (row === undefined) {
      unplaced.push(item);
      continue;
    }
    const list = byRow.get(row);
    if (list) list.push(item);
    else byRow.set(row, [item]);
  }
  return { byRow, unplaced };
}

/** The lines a row has comment buttons for: one per unified line, one per side of a split pair. */
export function gutterLines(row: PatchRow, lines: readonly PatchLine[], layout: PatchLayout): SideLine[] {
  const out: SideLine[] = [];
  const push = (l: SideLine | null) => l && out.push(l);
  if (row.kind === 'line' && layout === 'unified') push(commentLine(lines[row.index]!, 'unified'));
  else if (row.kind === 'pair') {
    if (row.left !== null) push(commentLine(lines[row.left]!, 'old'));
    if (row.right !== null) push(commentLine(lines[row.right]!, 'new'));
  }
  return out;
}

/**
 * The one gutter button Tab reaches among the rendered blocks: the last focused one (`focusKey`)
 * while it is rendered, else the first rendered one; null when no rendered row has a button.
 */
export function tabStopIn(
  shown: readonly number[],
  blocks: readonly (readonly PatchRow[])[],
  lines: readonly PatchLine[],
  layout: PatchLayout,
  focusKey: string | null,
): { key: string; block: number } | null {
  let first: { key: string; block: number } | null = null;
  for (const b of shown)
    for (const row of blocks[b] ?? []) {
      for (const l of gutterLines(row, lines, layout)) {
        const key = sideLineKey(l);
        if (key === focusKey) return { key, block: b };
        first ??= { key, block: b };
      }
    }
  return first;
}

/**
 * A shift-click's range from `from` to `to`, or null when it cannot extend from there (no line to
 * extend from, the other side, another hunk): the click then starts a one-line range of its own.
 */
export function extendRange(index: LineIndex, from: SideLine | null, to: SideLine, maxLines: number): SideRange | null {
  if (!from) return null;
  const range = selectRange(index, from, to, maxLines);
  return range.side === from.side && from.line >= range.start && from.line <= range.end ? range : null;
}
