import type { PatchLine } from './lines.ts';

export type PatchLayout = 'unified' | 'split';

/** One display row of a patch. */
export type PatchRow =
  /** Unified: one line. Split: a meta, hunk or note line across both sides. */
  | { kind: 'line'; index: number }
  /** Split: the old side's line and the new side's line (null: nothing on that side). */
  | { kind: 'pair'; left: number | null; right: number | null }
  /** A run of unchanged lines hidden until "show" is clicked; `id` is its first line's index. */
  | { kind: 'fold'; id: number; count: number };

/** Context runs longer than this are folded... */
export const FOLD_MIN_LINES = 12;
/** ...keeping this many unchanged lines next to each change (git's own default context). */
export const FOLD_KEEP_LINES = 3;

type Item = { kind: 'line'; index: number } | { kind: 'fold'; id: number; indices: number[] };

/**
 * Folds long runs of unchanged lines (as the stored patch provides them: patches written with a wide
 * context, or a hunk whose changes sit far apart) down to `FOLD_KEEP_LINES` on each side of a change.
 * A run touching the start or end of a hunk keeps lines only on its changed side.
 */
function foldContext(lines: readonly PatchLine[], openFolds: ReadonlySet<number>): Item[] {
  const items: Item[] = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i]!.kind !== 'context') {
      items.push({ kind: 'line', index: i++ });
      continue;
    }
    const start = i;
    while (i < lines.length && lines[i]!.kind === 'context') i++;
    const end = i;
    const atHunkStart = start === 0 || lines[start - 1]!.kind === 'hunk';
    const atHunkEnd = end === lines.length || lines[end]!.kind === 'hunk';
    const keepBefore = atHunkStart ? 0 : FOLD_KEEP_LINES;
    const keepAfter = atHunkEnd ? 0 : FOLD_KEEP_LINES;
    const hidden = end - start - keepBefore - keepAfter;
    // Lines the reader asked to see (context from the recorded file) are never folded away again.
    let asked = false;
    for (let k = start; k < end && !asked; k++) asked = lines[k]!.extra === true;
    if (end - start < FOLD_MIN_LINES || hidden < 2 || asked || openFolds.has(start + keepBefore)) {
      for (let k = start; k < end; k++) items.push({ kind: 'line', index: k });
      continue;
    }
    for (let k = start; k < start + keepBefore; k++) items.push({ kind: 'line', index: k });
    const indices = Array.from({ length: hidden }, (_, n) => start + keepBefore + n);
    items.push({ kind: 'fold', id: start + keepBefore, indices });
    for (let k = end - keepAfter; k < end; k++) items.push({ kind: 'line', index: k });
  }
  return items;
}

/** The rows to render for a layout, with the folds not yet opened. */
export function buildRows(
  lines: readonly PatchLine[],
  layout: PatchLayout,
  openFolds: ReadonlySet<number>,
): PatchRow[] {
  const items = foldContext(lines, openFolds);
  const rows: PatchRow[] = [];
  if (layout === 'unified') {
    for (const it of items) rows.push(it.kind === 'fold' ? { kind: 'fold', id: it.id, count: it.indices.length } : it);
    return rows;
  }
  let k = 0;
  while (k < items.length) {
    const it = items[k]!;
    if (it.kind === 'fold') {
      rows.push({ kind: 'fold', id: it.id, count: it.indices.length });
      k++;
      continue;
    }
    const kind = lines[it.index]!.kind;
    if (kind === 'context') {
      rows.push({ kind: 'pair', left: it.index, right: it.index });
      k++;
      continue;
    }
    if (kind !== 'del' && kind !== 'add') {
      rows.push({ kind: 'line', index: it.index });
      k++;
      continue;
    }
    // A change run: removed lines on the left, added lines on the right, side by side.
    const dels: number[] = [];
    const adds: number[] = [];
    const notes: number[] = [];
    while (k < items.length) {
      const cur = items[k]!;
      if (cur.kind !== 'line') break;
      const ck = lines[cur.index]!.kind;
      if (ck === 'del' && adds.length === 0) dels.push(cur.index);
      else if (ck === 'add') adds.push(cur.index);
      else if (ck === 'note') notes.push(cur.index);
      else break;
      k++;
    }
    for (let n = 0; n < Math.max(dels.length, adds.length); n++)
      rows.push({ kind: 'pair', left: dels[n] ?? null, right: adds[n] ?? null });
    for (const index of notes) rows.push({ kind: 'line', index });
  }
  return rows;
}

/** The line's content without its `+`/`-`/space sign (empty context lines lost theirs). */
export function lineContent(line: PatchLine): string {
  return line.kind === 'add' || line.kind === 'del' || line.kind === 'context' ? line.text.slice(1) : line.text;
}

const HUNK_OLD = /^@@ -(\d+)(?:,(\d+))? /;

/**
 * For each hunk header, how many unchanged lines of the old file lie between it and the previous
 * hunk (or the top of the file). The stored patch does not carry them (git's 3 lines of context),
 * so the viewer says how many it skips instead of offering to show them.
 */
export function skippedBeforeHunks(lines: readonly PatchLine[]): Map<number, number> {
  const out = new Map<number, number>();
  let nextOld = 1;
  lines.forEach((line, i) => {
    if (line.kind !== 'hunk') return;
    const m = HUNK_OLD.exec(line.text);
    if (!m) return;
    const start = Number(m[1]);
    const count = m[2] === undefined ? 1 : Number(m[2]);
    // A hunk of an added file (`-0,0`) starts at 0: nothing skipped.
    const skipped = count === 0 ? Math.max(0, start - nextOld + 1) : start - nextOld;
    if (skipped > 0) out.set(i, skipped);
    nextOld = (count === 0 ? start + 1 : start) + count;
  });
  return out;
}
