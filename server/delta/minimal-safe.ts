import { recordCount, recordText, type Records, type TrimmedPair } from './trim-ends.ts';

/**
 * When is git's line diff minimal? git's Myers (xdiff) differs from a minimal diff in two ways only:
 * 1. before diffing it sets aside lines that occur often on the other side ("multimatch" lines:
 *    at least about sqrt(line count) times) when they sit inside runs of lines that have no match
 *    at all; such a line is then always reported changed, even if a minimal diff would keep it;
 * 2. when the edit cost of a sub-problem passes 256 it switches to heuristics.
 * Lines with no match on the other side are set aside too, but those are changes in every diff.
 * So when no multimatch line is flanked by no-match lines on both sides (checked conservatively:
 * the ratio and window git also applies are ignored, which only sends more files to git) and the
 * minimal edit is at most MAX_MINIMAL_EDITS lines, every minimal diff has git's exact counts.
 */

/** Edits (additions + deletions) below which git's cost heuristics cannot trigger (2 x 256, with margin). */
export const MAX_MINIMAL_EDITS = 500;

/** git's cheap integer square root: 2^ceil(bits/2). */
function roughSqrt(n: number): number {
  let i = 1;
  for (let m = n; m > 0; m = Math.floor(m / 4)) i *= 2;
  return i;
}

/** The multimatch threshold git uses for a file of `n` lines. */
function multimatchLimit(n: number): number {
  return Math.min(roughSqrt(n), 1024);
}

/** 0 = no match on the other side, 1 = some, 2 = many; over [start, end] of `lines`. */
function classify(
  lines: string[],
  start: number,
  end: number,
  otherCounts: Map<string, number>,
  limit: number,
): Uint8Array {
  const dis = new Uint8Array(Math.max(0, end - start + 1));
  for (let i = start; i <= end; i++) {
    const nm = otherCounts.get(lines[i]!) ?? 0;
    dis[i - start] = nm === 0 ? 0 : nm >= limit ? 2 : 1;
  }
  return dis;
}

/** True when some multimatch line has a run of no-match (or multimatch) lines with a no-match line on each side. */
function mayDiscardMultimatch(dis: Uint8Array): boolean {
  for (let i = 0; i < dis.length; i++) {
    if (dis[i] !== 2) continue;
    let before = false;
    for (let j = i - 1; j >= 0 && dis[j] !== 1; j--) {
      if (dis[j] === 0) {
        before = true;
        break;
      }
    }
    if (!before) continue;
    for (let j = i + 1; j < dis.length && dis[j] !== 1; j++) {
      if (dis[j] === 0) return true;
    }
  }
  return false;
}

function counts(lines: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const l of lines) m.set(l, (m.get(l) ?? 0) + 1);
  return m;
}

/**
 * True when git's diff of these two files (records with their line ends) cannot differ from a
 * minimal one by its preprocessing; the caller must still check the minimal edit size.
 */
export function gitPreprocessKeepsMinimal(a: string[], b: string[]): boolean {
  let start = 0;
  const lim = Math.min(a.length, b.length);
  while (start < lim && a[start] === b[start]) start++;
  let tail = 0;
  while (tail < lim - start && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const endA = a.length - 1 - tail;
  const endB = b.length - 1 - tail;
  const ca = counts(a);
  const cb = counts(b);
  if (mayDiscardMultimatch(classify(a, start, endA, cb, multimatchLimit(a.length)))) return false;
  if (mayDiscardMultimatch(classify(b, start, endB, ca, multimatchLimit(b.length)))) return false;
  return true;
}

/** How often each of `keys` occurs among all records of `r` (only records of a length some key has are read). */
function countsIn(keys: readonly string[], r: Records): Map<string, number> {
  const m = new Map<string, number>();
  const lengths = new Set<number>();
  for (const k of keys) {
    m.set(k, 0);
    lengths.add(k.length);
  }
  const n = recordCount(r);
  for (let i = 0; i < n; i++) {
    if (!lengths.has(r.starts[i + 1]! - r.starts[i]!)) continue;
    const text = recordText(r, i);
    const c = m.get(text);
    if (c !== undefined) m.set(text, c + 1);
  }
  return m;
}

/**
 * `gitPreprocessKeepsMinimal` for a pair whose equal ends are already trimmed: the same
 * classification of the records between the ends against whole-file counts, without a string
 * for every line of both files.
 */
export function trimmedKeepsMinimal(t: TrimmedPair): boolean {
  const na = recordCount(t.a);
  const nb = recordCount(t.b);
  const midA: string[] = [];
  const midB: string[] = [];
  for (let i = t.head; i < na - t.tail; i++) midA.push(recordText(t.a, i));
  for (let i = t.head; i < nb - t.tail; i++) midB.push(recordText(t.b, i));
  if (mayDiscardMultimatch(classify(midA, 0, midA.length - 1, countsIn(midA, t.b), multimatchLimit(na)))) return false;
  if (mayDiscardMultimatch(classify(midB, 0, midB.length - 1, countsIn(midB, t.a), multimatchLimit(nb)))) return false;
  return true;
}
