import { diffArrays } from 'diff';
import { funcName, hunkHeader } from './hunks.ts';

/**
 * A file's hunks as `git diff --ignore-all-space` shows them, from both sides' text: lines are
 * compared with every whitespace character dropped (jsdiff's line option only trims the ends, so
 * the lines are matched as arrays with a comparator). A line that only changed whitespace is
 * context, shown as it is on the new side; a hunk is 3 lines of context around its changes, and
 * changes with at most 6 lines between them share one hunk, and a hunk header names git's default
 * function line, as git does. A missing newline at the
 * end of the file is whitespace as well (git's -w does not show it either). Pure: text in, hunk
 * text out.
 */

const CONTEXT = 3;
const NO_NEWLINE = '\\ No newline at end of file';

export interface WhitespaceHunks {
  /** Hunk text (`@@` lines and their bodies), empty when whitespace was all that changed. */
  hunks: string;
  additions: number;
  deletions: number;
}

/** Lines of a text without their `\n`, and whether the last one had none. */
function splitLines(text: string): { lines: string[]; noEol: boolean } {
  if (text === '') return { lines: [], noEol: false };
  const lines = text.split('\n');
  const noEol = lines[lines.length - 1] !== '';
  if (!noEol) lines.pop();
  return { lines, noEol };
}

interface Row {
  sign: ' ' | '-' | '+';
  text: string;
  /** 0-based line on the old side (context and `-`), on the new side (context and `+`). */
  oldAt: number;
  newAt: number;
  /** The line is the last of its side and had no newline. */
  noEol: boolean;
}

/**
 * The hunks of `before` -> `after` ignoring all whitespace, or null when jsdiff gave up within
 * `timeoutMs` (the caller keeps the stored patch and says so).
 */
export function ignoreWhitespaceHunks(before: string, after: string, timeoutMs: number): WhitespaceHunks | null {
  const a = splitLines(before);
  const b = splitLines(after);
  const keyA = a.lines.map((l) => l.replace(/\s+/g, ''));
  const keyB = b.lines.map((l) => l.replace(/\s+/g, ''));
  const changes = diffArrays(
    a.lines.map((_, i) => i),
    b.lines.map((_, i) => i),
    { comparator: (x: number, y: number) => keyA[x] === keyB[y], timeout: Math.max(1, timeoutMs) },
  );
  if (!changes) return null;

  const rows: Row[] = [];
  let oldAt = 0;
  let newAt = 0;
  const lastOld = a.lines.length - 1;
  const lastNew = b.lines.length - 1;
  for (const c of changes) {
    for (let k = 0; k < c.count; k++) {
      if (c.added) {
        rows.push({ sign: '+', text: b.lines[newAt]!, oldAt, newAt, noEol: b.noEol && newAt === lastNew });
        newAt++;
      } else if (c.removed) {
        rows.push({ sign: '-', text: a.lines[oldAt]!, oldAt, newAt, noEol: a.noEol && oldAt === lastOld });
        oldAt++;
      } else {
        // Shown as on the new side. A missing newline at the end is whitespace too, to git's -w:
        // the note stays only when neither side has one.
        const noEol = a.noEol && oldAt === lastOld && b.noEol && newAt === lastNew;
        rows.push({ sign: ' ', text: b.lines[newAt]!, oldAt, newAt, noEol });
        oldAt++;
        newAt++;
      }
    }
  }
  return toHunks(rows, a.lines);
}

/** Groups changed rows with their context into hunks. */
function toHunks(rows: readonly Row[], oldLines: readonly string[]): WhitespaceHunks {
  const changed = rows.flatMap((r, i) => (r.sign === ' ' ? [] : [i]));
  const out: string[] = [];
  let additions = 0;
  let deletions = 0;
  let g = 0;
  while (g < changed.length) {
    let end = g;
    // Changes whose context would touch or overlap share a hunk.
    while (end + 1 < changed.length && changed[end + 1]! - changed[end]! <= 2 * CONTEXT + 1) end++;
    const from = Math.max(0, changed[g]! - CONTEXT);
    const to = Math.min(rows.length - 1, changed[end]! + CONTEXT);
    const body = rows.slice(from, to + 1);
    const oldCount = body.filter((r) => r.sign !== '+').length;
    const newCount = body.filter((r) => r.sign !== '-').length;
    const first = body[0]!;
    out.push(hunkHeader(first.oldAt + 1, oldCount, first.newAt + 1, newCount, funcName(oldLines, first.oldAt)));
    for (const r of body) {
      out.push(`${r.sign}${r.text}`);
      if (r.noEol) out.push(NO_NEWLINE);
      if (r.sign === '+') additions++;
      else if (r.sign === '-') deletions++;
    }
    g = end + 1;
  }
  return { hunks: out.length > 0 ? `${out.join('\n')}\n` : '', additions, deletions };
}
