import { structuredPatch } from 'diff';
import { countLines } from './content.ts';
import { middleCount, recordCount, recordText, type Records, type TrimmedPair } from './trim-ends.ts';
import type { LineDiff } from './types.ts';

/**
 * Hunk text in git's unified format, built in process: whole-file hunks for added and deleted
 * files (no diff needed), and jsdiff hunks for when no git engine is at hand. Everything works on
 * bytes (jsdiff sees latin1 strings, one char per byte) so any content round-trips exactly.
 */

const NO_NEWLINE = '\\ No newline at end of file';

/** `@@ -a,b +c,d @@`: git prints a count of 1 as nothing and the start of an empty range as the line before. */
export function hunkHeader(oldStart: number, oldLines: number, newStart: number, newLines: number, func = ''): string {
  const range = (start: number, lines: number) => `${lines === 0 ? start - 1 : start}${lines === 1 ? '' : `,${lines}`}`;
  return `@@ -${range(oldStart, oldLines)} +${range(newStart, newLines)} @@${func ? ` ${func}` : ''}`;
}

/** The single hunk that adds (`+`) or removes (`-`) a whole file; empty for empty content. */
export function wholeFileHunk(bytes: Buffer, sign: '+' | '-'): Buffer {
  const n = countLines(bytes);
  if (n === 0) return Buffer.alloc(0);
  const header = sign === '+' ? hunkHeader(1, 0, 1, n) : hunkHeader(1, n, 1, 0);
  const parts: Buffer[] = [Buffer.from(header + '\n')];
  let start = 0;
  while (start < bytes.length) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl === -1 ? bytes.length : nl + 1;
    parts.push(Buffer.from(sign), bytes.subarray(start, end));
    if (nl === -1) parts.push(Buffer.from(`\n${NO_NEWLINE}\n`));
    start = end;
  }
  return Buffer.concat(parts);
}

/** Additions and deletions of hunk text: its `+` and `-` lines (what `--numstat` counts). */
export function countHunkLines(hunks: Buffer): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  let start = 0;
  while (start < hunks.length) {
    const c = hunks[start];
    if (c === 0x2b) additions++;
    else if (c === 0x2d) deletions++;
    const nl = hunks.indexOf(0x0a, start);
    if (nl === -1) break;
    start = nl + 1;
  }
  return { additions, deletions };
}

/**
 * git's default hunk-header function name: the nearest line above the hunk that starts with a
 * letter, `_` or `$`, cut to 80 bytes, trailing whitespace dropped.
 */
export function funcName(oldLines: readonly string[], hunkFirstLine: number): string {
  for (let l = hunkFirstLine - 1; l >= 0; l--) {
    const rec = oldLines[l]!;
    if (/^[A-Za-z_$]/.test(rec)) return rec.slice(0, 80).replace(/[ \t\n\v\f\r]+$/, '');
  }
  return '';
}

/** Split into git's records (each with its `\n`), for the function-name search. */
function records(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl + 1;
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/**
 * A cheap lower bound of the edit size: lines that occur more often on one side than the other.
 * jsdiff costs O(N*D); when this bound already makes that hopeless within the budget, skip it.
 */
export function editLowerBound(before: Buffer, after: Buffer): { lines: number; edits: number } {
  const counts = new Map<string, number>();
  const a = records(before.toString('latin1'));
  const b = records(after.toString('latin1'));
  for (const r of a) counts.set(r, (counts.get(r) ?? 0) + 1);
  for (const r of b) counts.set(r, (counts.get(r) ?? 0) - 1);
  let edits = 0;
  for (const v of counts.values()) edits += Math.abs(v);
  return { lines: a.length + b.length, edits };
}

/** jsdiff cost units (lines x edits) that fit in roughly 100 ms here; scaled by the budget. */
const JSDIFF_UNITS_PER_MS = 20_000;

export function jsdiffLikelyFits(before: Buffer, after: Buffer, timeoutMs: number): boolean {
  const { lines, edits } = editLowerBound(before, after);
  return lines * edits <= JSDIFF_UNITS_PER_MS * timeoutMs;
}

/**
 * jsdiff's minimal line diff within `timeoutMs`, as git-style hunks (3 lines of context), or null
 * when jsdiff gives up. Minimal, so counts equal git's wherever git's own diff is minimal (small edits).
 */
export function jsdiffLineDiff(before: Buffer, after: Buffer, timeoutMs: number): LineDiff | null {
  const a = before.toString('latin1');
  const b = after.toString('latin1');
  const patch = structuredPatch('a', 'b', a, b, undefined, undefined, { context: 3, timeout: Math.max(1, timeoutMs) });
  if (!patch) return null;
  const oldLines = records(a);
  return formatHunks(patch.hunks, 0, (first) => funcName(oldLines, first));
}

interface JsdiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

/** jsdiff hunks (lines `offset` further down in the files) as git's hunk text, counted. */
function formatHunks(hunks: readonly JsdiffHunk[], offset: number, funcOf: (firstLine: number) => string): LineDiff {
  const out: string[] = [];
  let additions = 0;
  let deletions = 0;
  for (const h of hunks) {
    out.push(
      hunkHeader(h.oldStart + offset, h.oldLines, h.newStart + offset, h.newLines, funcOf(h.oldStart - 1 + offset)),
    );
    for (const line of h.lines) {
      if (line.startsWith('+')) additions++;
      else if (line.startsWith('-')) deletions++;
      out.push(line);
    }
  }
  const text = out.length ? Buffer.from(out.join('\n') + '\n', 'latin1') : Buffer.alloc(0);
  return { additions, deletions, hunks: text };
}

/** git's default function name for a hunk starting at record `first`, read from the records above it. */
function funcNameAt(r: Records, first: number): string {
  for (let l = first - 1; l >= 0; l--) {
    const c = r.bytes[r.starts[l]!];
    const starts =
      c !== undefined && ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x24);
    if (!starts) continue;
    const end = Math.min(r.starts[l + 1]!, r.starts[l]! + 80);
    return r.bytes.toString('latin1', r.starts[l], end).replace(/[ \t\n\v\f\r]+$/, '');
  }
  return '';
}

/** Context lines git shows around a change. */
const CONTEXT = 3;

/** Record i as a hunk line after `sign`, and git's marker when it is a last line without `\n`. */
function pushLine(out: string[], r: Records, i: number, sign: string): void {
  const text = recordText(r, i);
  if (text.endsWith('\n')) out.push(sign + text.slice(0, -1));
  else out.push(sign + text, NO_NEWLINE);
}

/**
 * The diff of two files whose records differ on one side only (lines inserted, or removed, in one
 * block between the trimmed ends): every such record is a change in any diff, git's included, so
 * the counts are exact without diffing. One hunk with git's context.
 */
export function oneSidedDiff(t: TrimmedPair): LineDiff {
  const { a, b, head, tail } = t;
  const midA = middleCount(a, t);
  const midB = middleCount(b, t);
  if (midA > 0 && midB > 0) throw new Error('oneSidedDiff: both sides changed');
  if (midA === 0 && midB === 0) return { additions: 0, deletions: 0, hunks: Buffer.alloc(0) };
  const c1 = Math.min(CONTEXT, head);
  const c2 = Math.min(CONTEXT, tail);
  const from = head - c1;
  const out = [hunkHeader(from + 1, c1 + midA + c2, from + 1, c1 + midB + c2, funcNameAt(a, from))];
  for (let i = from; i < head; i++) pushLine(out, a, i, ' ');
  for (let i = head; i < head + midA; i++) pushLine(out, a, i, '-');
  for (let i = head; i < head + midB; i++) pushLine(out, b, i, '+');
  const endA = recordCount(a) - tail;
  for (let i = endA; i < endA + c2; i++) pushLine(out, a, i, ' ');
  return { additions: midB, deletions: midA, hunks: Buffer.from(out.join('\n') + '\n', 'latin1') };
}

/**
 * jsdiff's minimal diff of only the records between the trimmed ends (with the context lines
 * around them), placed back at their lines in the files: the same counts as a diff of the whole
 * files, at a cost that follows the changed region, not the file. Null when jsdiff gives up, or
 * when its alignment would reach into the context (then the whole files have to be diffed).
 */
export function jsdiffTrimmed(t: TrimmedPair, timeoutMs: number): LineDiff | null {
  const { a, b, head, tail } = t;
  const c1 = Math.min(CONTEXT, head);
  const c2 = Math.min(CONTEXT, tail);
  const from = head - c1;
  const endA = recordCount(a) - tail + c2;
  const endB = recordCount(b) - tail + c2;
  const textA = a.bytes.toString('latin1', a.starts[from], a.starts[endA]);
  const textB = b.bytes.toString('latin1', b.starts[from], b.starts[endB]);
  const patch = structuredPatch('a', 'b', textA, textB, undefined, undefined, {
    context: CONTEXT,
    timeout: Math.max(1, timeoutMs),
  });
  if (!patch) return null;
  const linesA = endA - from;
  const linesB = endB - from;
  for (const h of patch.hunks) {
    let o = h.oldStart - 1;
    let n = h.newStart - 1;
    for (const line of h.lines) {
      const c = line[0];
      if (c === ' ') {
        o++;
        n++;
      } else if (c === '-') {
        if (o < c1 || o >= linesA - c2) return null;
        o++;
      } else if (c === '+') {
        if (n < c1 || n >= linesB - c2) return null;
        n++;
      }
    }
  }
  return formatHunks(patch.hunks, from, (first) => funcNameAt(a, first));
}
