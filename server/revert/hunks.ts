/**
 * Undoing single hunks of a file's patch: the file's end content with the chosen hunks put back to
 * their start lines. Pure: the patch is the file's whole stanza (git's format, text only), the
 * hunks are named by their `@@ -a,b +c,d @@` ranges, and the end content must be the one the patch
 * was made from (its new lines are checked before anything is replaced).
 *
 * A hunk may be undone in part: of its body lines (numbered from 0 after the header, the
 * `\ No newline at end of file` marks not counted) only the chosen `+` and `-` lines are undone.
 * An unchosen `+` line stays (it becomes context), an unchosen `-` line stays removed (it is
 * dropped): the same reduced hunk `git apply -R` would be given.
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

/** One body line of a hunk: its mark and its text with its line end as the file has it. */
export interface BodyLine {
  kind: ' ' | '-' | '+';
  text: string;
}

interface Hunk {
  range: HunkRange;
  /** The hunk's start lines and end lines, each with its line end as the file has it. */
  old: Buffer;
  new: Buffer;
  body: BodyLine[];
}

/** A hunk to undo, by its header; `lines`: only these body lines of it (0 = the first after the header). */
export interface HunkChoice {
  hunk: string;
  lines?: readonly number[];
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
    const body: BodyLine[] = [];
    while (i < lines.length && !lines[i]!.startsWith('@@') && !lines[i]!.startsWith('diff --git')) {
      const line = lines[i]!;
      // "\ No newline at end of file" takes the line end off the line before it.
      const ending = lines[i + 1]?.startsWith(NO_NEWLINE) ? '' : '\n';
      const text = line.slice(1) + ending;
      if (line[0] === ' ' || line[0] === '-' || line[0] === '+') body.push({ kind: line[0], text });
      if (line[0] === ' ') {
        old.push(text);
        neu.push(text);
      } else if (line[0] === '-') old.push(text);
      else if (line[0] === '+') neu.push(text);
      i++;
      if (ending === '') i++;
    }
    out.push({ range, old: Buffer.from(old.join(''), 'utf8'), new: Buffer.from(neu.join(''), 'utf8'), body });
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

export type UndoHunks =
  | { ok: true; bytes: Buffer }
  | { ok: false; reason: 'not_found' | 'mismatch'; hunk: string }
  | { ok: false; reason: 'bad_lines'; hunk: string; message: string };

type BadLines = { ok: false; reason: 'bad_lines'; hunk: string; message: string };

/**
 * The start lines of `h` with only the `selected` body lines undone: context, the chosen `-` lines
 * and the unchosen `+` lines, in the hunk's order. A selection that is out of range, names a
 * context line, or would put the file's unterminated last line before another is refused.
 */
function partialStart(h: Hunk, selected: ReadonlySet<number>): Buffer | BadLines {
  const name = hunkName(h.range);
  const bad = (message: string): BadLines => ({ ok: false, reason: 'bad_lines', hunk: name, message });
  for (const n of selected) {
    const line = h.body[n];
    if (line === undefined)
      return bad(`line ${n} is not in hunk ${name}: its body lines are 0 to ${h.body.length - 1}`);
    if (line.kind === ' ') return bad(`line ${n} of hunk ${name} is a context line: only + and - lines can be undone`);
  }
  const kept = h.body.filter((l, n) => l.kind === ' ' || (l.kind === '-') === selected.has(n)).map((l) => l.text);
  if (kept.slice(0, -1).some((t) => !t.endsWith('\n')))
    return bad(
      `the selection of hunk ${name} would put the file's last line (it has no newline) before another line: select both sides of it`,
    );
  return Buffer.from(kept.join(''), 'utf8');
}

/**
 * `after` with the chosen hunks of `patch` undone (their end lines replaced by their start lines, or
 * with `lines` by the start lines of only those lines' undo), the others kept. A name that is no hunk
 * of the patch is `not_found`; end lines that are not where the patch says are `mismatch` (the patch
 * is not of this content); a selection of lines that cannot be undone is `bad_lines`. A hunk chosen
 * twice is undone once, with the union of its selections (whole if either is whole).
 */
export function undoHunks(after: Buffer, patch: string, choices: readonly HunkChoice[]): UndoHunks {
  const all = hunksOf(patch);
  const chosen = new Map<Hunk, Set<number> | 'whole'>();
  for (const choice of choices) {
    const wanted = parseHunkHeader(choice.hunk);
    const hunk = wanted && all.find((h) => hunkName(h.range) === hunkName(wanted));
    if (!hunk) return { ok: false, reason: 'not_found', hunk: choice.hunk };
    const had = chosen.get(hunk);
    if (choice.lines === undefined || had === 'whole') chosen.set(hunk, 'whole');
    else chosen.set(hunk, new Set([...(had ?? []), ...choice.lines]));
  }
  const starts = new Map<Hunk, Buffer>();
  for (const [h, selected] of chosen) {
    const start = selected === 'whole' ? h.old : partialStart(h, selected);
    if (!Buffer.isBuffer(start)) return start;
    starts.set(h, start);
  }
  const lines = splitLines(after);
  // From the bottom up, so a replacement never moves the lines of a hunk still to come.
  const order = [...chosen.keys()].sort((a, b) => b.range.newStart - a.range.newStart);
  for (const h of order) {
    // git prints an empty range's start as the line before it.
    const at = h.range.newLines === 0 ? h.range.newStart : h.range.newStart - 1;
    const covered = Buffer.concat(lines.slice(at, at + h.range.newLines));
    if (at < 0 || at + h.range.newLines > lines.length || !covered.equals(h.new))
      return { ok: false, reason: 'mismatch', hunk: hunkName(h.range) };
    lines.splice(at, h.range.newLines, ...splitLines(starts.get(h)!));
  }
  return { ok: true, bytes: Buffer.concat(lines) };
}
