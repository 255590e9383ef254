import type { CommentSide } from '../../shared/index.ts';

/**
 * Where a comment's lines are: read from one side of a stored change (the whole file when its
 * contents were kept, else only the lines its patch shows), and found again after later changes of
 * the session touched the file. Pure: the caller reads the store.
 */

/** One side of a file as far as it is known: every line, or only the lines a patch shows (1-based). */
export type SideLines =
  { kind: 'whole'; lines: readonly string[] } | { kind: 'hunks'; lines: ReadonlyMap<number, string> };

/** A file's lines without their line ends (a `\r` before the `\n` stays); no final empty line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * The lines of one side that a file's patch shows: its context lines and, for `before`, its removed
 * lines, for `after` its added lines, by line number. A patch cut short simply shows fewer lines.
 */
export function patchSideLines(patch: string, side: CommentSide): Map<number, string> {
  const out = new Map<number, string>();
  let oldLine = 0;
  let newLine = 0;
  let inHunk = false;
  for (const raw of patch.split('\n')) {
    const header = HUNK_HEADER.exec(raw);
    if (header) {
      oldLine = Number(header[1]);
      newLine = Number(header[3]);
      // A range of 0 lines names the line before it.
      if (header[2] === '0') oldLine++;
      if (header[4] === '0') newLine++;
      inHunk = true;
      continue;
    }
    if (!inHunk) continue;
    const mark = raw[0];
    const text = raw.slice(1);
    if (mark === ' ') {
      if (side === 'before') out.set(oldLine, text);
      else out.set(newLine, text);
      oldLine++;
      newLine++;
    } else if (mark === '-') {
      if (side === 'before') out.set(oldLine, text);
      oldLine++;
    } else if (mark === '+') {
      if (side === 'after') out.set(newLine, text);
      newLine++;
    } else if (mark !== '\\') {
      // A line that is none of these ends the hunks (the next file's header, a cut marker).
      inHunk = false;
    }
  }
  return out;
}

/** The text of lines `start..end` of a side, or why they cannot be commented on. */
export function linesAt(
  side: SideLines,
  start: number,
  end: number,
): { ok: true; lines: string[] } | { ok: false; reason: string } {
  if (side.kind === 'whole') {
    if (end > side.lines.length)
      return {
        ok: false,
        reason:
          side.lines.length === 0
            ? 'the file is empty on that side'
            : `the file has ${side.lines.length} line${side.lines.length === 1 ? '' : 's'} on that side`,
      };
    return { ok: true, lines: side.lines.slice(start - 1, end) };
  }
  const lines: string[] = [];
  for (let n = start; n <= end; n++) {
    const text = side.lines.get(n);
    if (text === undefined)
      return {
        ok: false,
        reason: `line ${n} is not shown by the stored patch (the file's contents were not kept, so only the lines of its patch can be commented on)`,
      };
    lines.push(text);
  }
  return { ok: true, lines };
}

const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The first line of every place where `wanted` stands, nearest to `near` first (the earlier one on a tie). */
export function findNearest(side: SideLines, wanted: readonly string[], near: number): number | null {
  if (wanted.length === 0) return null;
  let best: number | null = null;
  const consider = (start: number) => {
    const got = linesAt(side, start, start + wanted.length - 1);
    if (!got.ok || !same(got.lines, wanted)) return;
    if (best === null || Math.abs(start - near) < Math.abs(best - near)) best = start;
  };
  if (side.kind === 'whole') for (let s = 1; s + wanted.length - 1 <= side.lines.length; s++) consider(s);
  else for (const [n, text] of [...side.lines].sort((a, b) => a[0] - b[0])) if (text === wanted[0]) consider(n);
  return best;
}

/** A stored file row that touched a path, with its change's place in the session's order. */
export interface Touch {
  change_id: string;
  file_id: string;
  path: string;
  old_path: string | null;
  change_type: 'added' | 'modified' | 'deleted' | 'renamed';
  finished_at: number;
  seq: number;
}

export interface AnchorToFind {
  path: string;
  start_line: number;
  end_line: number;
  lines: readonly string[];
  /** The anchored change's place: later changes are those after it. */
  finished_at: number;
  seq: number;
}

export interface Reanchored {
  outdated: boolean;
  current: { change_id: string; path: string; start_line: number; end_line: number } | null;
}

const after = (t: { finished_at: number; seq: number }, pos: { finished_at: number; seq: number }) =>
  t.finished_at > pos.finished_at || (t.finished_at === pos.finished_at && t.seq > pos.seq);

/** Renames followed at most: a chain longer than this is treated as lost. */
const MAX_HOPS = 1000;

/**
 * Whether later changes moved a comment's lines. The later changes that touched its path are
 * followed in the session's order (a rename carries the path along, a deletion removes it); the
 * last one's `after` side is where the file stands now. The comment is outdated when that side no
 * longer has the anchored text at the anchored lines of the same path; `current` is where the same
 * lines stand there (the nearest place), or null when they are gone or the file is.
 */
export function reanchor(
  anchor: AnchorToFind,
  touchesOf: (path: string) => readonly Touch[],
  read: (touch: Touch) => SideLines | null,
): Reanchored {
  let path = anchor.path;
  let pos: { finished_at: number; seq: number } = anchor;
  let last: Touch | null = null;
  let gone = false;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const later = touchesOf(path)
      .filter((t) => after(t, pos))
      .sort((a, b) => a.finished_at - b.finished_at || a.seq - b.seq);
    let renamedTo: string | null = null;
    for (const t of later) {
      pos = t;
      last = t;
      if (t.change_type === 'renamed' && t.old_path === path && t.path !== path) {
        renamedTo = t.path;
        gone = false;
        break;
      }
      gone = t.change_type === 'deleted';
    }
    if (renamedTo === null) break;
    path = renamedTo;
  }
  if (last === null) return { outdated: false, current: null };
  if (gone) return { outdated: true, current: null };
  const now = read(last);
  if (now === null) return { outdated: true, current: null };
  const there = linesAt(now, anchor.start_line, anchor.end_line);
  if (path === anchor.path && there.ok && same(there.lines, anchor.lines)) return { outdated: false, current: null };
  const found = findNearest(now, anchor.lines, anchor.start_line);
  return {
    outdated: true,
    current:
      found === null
        ? null
        : { change_id: last.change_id, path, start_line: found, end_line: found + anchor.lines.length - 1 },
  };
}
