/**
 * Undoing single hunks of a file's patch: the file's end content with the chosen hunks put back to
 * their start lines. Pure: the patch is the file's whole stanza (git's format, text only), the
 * hunks are named by their `@@ -a,b +c,d @@` ranges, and the end content must be the one the patch
 * was made from (its new lines are checked before anything is replaced).
 */

export interface HunkRange {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
}

const HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** The ranges of a hunk header (`@@ -3,4 +3,5 @@ optional context`); null when it is not one. */
export function parseHunkHeader(line: string): HunkRange | null {
  const m = HEADER.exec(line);
  if (!m) return null;
  return {
    oldStart: Number(m[1]),
    oldLines: m[2] === undefined ? 1 : Number(m[2]),
    newStart: Number(m[3]),
    newLines: m[4] === undefined ? 1 : Number(m[4]),
  };
}

/** The header as rundiff names a hunk: its ranges alone, as git prints them. */
export function hunkName(r: HunkRange): string {
  const range = (start: number, lines: number) => (lines === 1 ? `${start}` : `${start},${lines}`);
  return `@@ -${range(r.oldStart, r.oldLines)} +${range(r.newStart, r.newLines)} @@`;
}

interface Hunk {
  range: HunkRange;
  /** The hunk's start lines and end lines, each with its line end as the file has it. */
  old: Buffer;
  new: Buffer;
}

const NO_NEWLINE = '\\';

/** Every hunk of a stanza, with the bytes of both sides it covers. */
export function hunksOf(patch: string): Hunk[] {
  const lines = patch.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const out: Hunk[] = [];
  let i = 0;
  while (i < lines.length) {
    const range = parseHunkHeader(lines[i]!);
    i++;
    if (!range) continue;
    const old: string[] = [];
    const neu: string[] = [];
    while (i < lines.length && !lines[i]!.startsWith('@@') && !lines[i]!.startsWith('diff --git')) {
      const line = lines[i]!;
      // "\ No newline at end of file" takes the line end off the line before it.
      const ending = lines[i + 1]?.startsWith(NO_NEWLINE) ? '' : '\n';
      const text = line.slice(1) + ending;
      if (line[0] === ' ') {
        old.push(text);
        neu.push(text);
      } else if (line[0] === '-') old.push(text);
      else if (line[0] === '+') neu.push(text);
      i++;
      if (ending === '') i++;
    }
    out.push({ range, old: Buffer.from(old.join(''), 'utf8'), new: Buffer.from(neu.join(''), 'utf8') });
  }
  return out;
}

/** The content split into lines, each with its `\n` (the last one may have none). */
function splitLines(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  while (start < bytes.length) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl === -1 ? bytes.length : nl + 1;
    out.push(bytes.subarray(start, end));
    start = end;
  }
  return out;
}

export type UndoHunks = { ok: true; bytes: Buffer } | { ok: false; reason: 'not_found' | 'mismatch'; hunk: string };

/**
 * `after` with the named hunks of `patch` undone (their end lines replaced by their start lines),
 * the others kept. A name that is no hunk of the patch is `not_found`; end lines that are not where
 * the patch says are `mismatch` (the patch is not of this content).
 */
export function undoHunks(after: Buffer, patch: string, names: readonly string[]): UndoHunks {
  const all = hunksOf(patch);
  const chosen: Hunk[] = [];
  for (const name of names) {
    const wanted = parseHunkHeader(name);
    const hunk = wanted && all.find((h) => hunkName(h.range) === hunkName(wanted));
    if (!hunk) return { ok: false, reason: 'not_found', hunk: name };
    if (!chosen.includes(hunk)) chosen.push(hunk);
  }
  const lines = splitLines(after);
  // From the bottom up, so a replacement never moves the lines of a hunk still to come.
  chosen.sort((a, b) => b.range.newStart - a.range.newStart);
  for (const h of chosen) {
    // git prints an empty range's start as the line before it.
    const at = h.range.newLines === 0 ? h.range.newStart : h.range.newStart - 1;
    const covered = Buffer.concat(lines.slice(at, at + h.range.newLines));
    if (at < 0 || at + h.range.newLines > lines.length || !covered.equals(h.new))
      return { ok: false, reason: 'mismatch', hunk: hunkName(h.range) };
    lines.splice(at, h.range.newLines, ...splitLines(h.old));
  }
  return { ok: true, bytes: Buffer.concat(lines) };
}
