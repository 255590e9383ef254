/**
 * The common first and last records of two files, found on the bytes (no string per line), as
 * git trims them before it diffs: records are lines with their `\n`, so a last line without one
 * differs from the same text with one. What lies between is the only part a diff has to look at.
 */

export interface Records {
  bytes: Buffer;
  /** Record i is `bytes[starts[i], starts[i + 1])`; the last entry is `bytes.length`. */
  starts: number[];
}

export function recordsOf(bytes: Buffer): Records {
  const starts = [0];
  let at = bytes.indexOf(0x0a);
  while (at !== -1) {
    starts.push(at + 1);
    at = bytes.indexOf(0x0a, at + 1);
  }
  if (starts[starts.length - 1] !== bytes.length) starts.push(bytes.length);
  return { bytes, starts };
}

export function recordCount(r: Records): number {
  return r.starts.length - 1;
}

export function sameRecord(a: Records, i: number, b: Records, j: number): boolean {
  const as = a.starts[i]!;
  const ae = a.starts[i + 1]!;
  const bs = b.starts[j]!;
  const be = b.starts[j + 1]!;
  return ae - as === be - bs && a.bytes.compare(b.bytes, bs, be, as, ae) === 0;
}

export interface TrimmedPair {
  a: Records;
  b: Records;
  /** Records equal at the start of both. */
  head: number;
  /** Records equal at the end of both, never overlapping `head` (as git limits it). */
  tail: number;
}

export function trimEnds(before: Buffer, after: Buffer): TrimmedPair {
  const a = recordsOf(before);
  const b = recordsOf(after);
  const na = recordCount(a);
  const nb = recordCount(b);
  const lim = Math.min(na, nb);
  let head = 0;
  while (head < lim && sameRecord(a, head, b, head)) head++;
  let tail = 0;
  while (tail < lim - head && sameRecord(a, na - 1 - tail, b, nb - 1 - tail)) tail++;
  return { a, b, head, tail };
}

/** Records of `r` between the trimmed ends. */
export function middleCount(r: Records, t: TrimmedPair): number {
  return recordCount(r) - t.head - t.tail;
}

/** Record i as a latin1 string (one char per byte), its `\n` included. */
export function recordText(r: Records, i: number): string {
  return r.bytes.toString('latin1', r.starts[i], r.starts[i + 1]);
}
