import { diffWordsWithSpace } from 'diff';
import type { PatchLine } from './lines.ts';

/** A character range `[start, end)` of a line's content that differs from its paired line. */
export interface Range {
  start: number;
  end: number;
}

/**
 * Pairs the removed and added lines of each change run inside a hunk: the i-th `-` line of a run
 * with the i-th `+` line that follows it, as reviewers read them. Returns, for each paired line
 * index, the index of its partner.
 */
export function pairChangedLines(lines: readonly PatchLine[]): Map<number, number> {
  const pairs = new Map<number, number>();
  let i = 0;
  while (i < lines.length) {
    if (lines[i]!.kind !== 'del') {
      i++;
      continue;
    }
    const dels: number[] = [];
    while (i < lines.length && lines[i]!.kind === 'del') dels.push(i++);
    // A "\ No newline at end of file" note may sit between the two runs.
    while (i < lines.length && lines[i]!.kind === 'note') i++;
    const adds: number[] = [];
    while (i < lines.length && lines[i]!.kind === 'add') adds.push(i++);
    for (let k = 0; k < Math.min(dels.length, adds.length); k++) {
      pairs.set(dels[k]!, adds[k]!);
      pairs.set(adds[k]!, dels[k]!);
    }
  }
  return pairs;
}

/** Lines longer than this are not word-diffed (the diff is quadratic in the worst case). */
export const WORD_DIFF_MAX_CHARS = 1_000;
/** When more than this share of a pair changed, highlighting words says nothing: the whole line changed. */
const MAX_CHANGED_SHARE = 0.7;

/**
 * The changed ranges of a removed line (`before`) and of its added partner (`after`), contents
 * without the `-`/`+` sign; null when the lines are too long or too different to be worth marking.
 */
export function wordRanges(before: string, after: string): { before: Range[]; after: Range[] } | null {
  if (before.length > WORD_DIFF_MAX_CHARS || after.length > WORD_DIFF_MAX_CHARS) return null;
  if (before === after) return { before: [], after: [] };
  const parts = diffWordsWithSpace(before, after, { maxEditLength: 200 });
  if (!parts) return null;
  const out = { before: [] as Range[], after: [] as Range[] };
  let b = 0;
  let a = 0;
  let changed = 0;
  for (const p of parts) {
    const n = p.value.length;
    if (p.removed) {
      push(out.before, b, b + n);
      b += n;
      changed += n;
    } else if (p.added) {
      push(out.after, a, a + n);
      a += n;
      changed += n;
    } else {
      b += n;
      a += n;
    }
  }
  if (changed > MAX_CHANGED_SHARE * (before.length + after.length)) return null;
  return out;
}

/** Appends a range, merging it with the previous one when they touch. */
function push(ranges: Range[], start: number, end: number): void {
  const last = ranges[ranges.length - 1];
  if (last && last.end === start) last.end = end;
  else ranges.push({ start, end });
}
