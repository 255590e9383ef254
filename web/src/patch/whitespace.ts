import { diffArrays } from 'diff';
import type { PatchLine } from './lines.ts';
import { lineContent } from './rows.ts';

/** Edits per hunk past which lines are not re-matched (the hunk is shown as stored and counted). */
export const WHITESPACE_MAX_EDITS = 500;

export interface WhitespaceView {
  /** The patch's lines with whitespace-only changes shown as unchanged lines. */
  lines: PatchLine[];
  /** Hunks left out because whitespace was all they changed. */
  hiddenHunks: number;
  /** Hunks shown as stored because they held more than WHITESPACE_MAX_EDITS edits. */
  tooBigHunks: number;
}

/** A line as git's `-w` compares it: every whitespace character dropped. */
const key = (line: PatchLine) => lineContent(line).replace(/\s+/g, '');

/**
 * The stored patch as git's `--ignore-all-space` would show it, within the stored hunks: each hunk's
 * old side (context and removed lines) and new side (context and added lines) are matched again on
 * their lines without whitespace. A removed line and an added line that differ only in whitespace
 * become one unchanged line (the new text, both line numbers); a hunk left with no change is
 * dropped. A `\ No newline` note stays after the line it follows.
 */
export function ignoreWhitespace(lines: readonly PatchLine[]): WhitespaceView {
  const out: PatchLine[] = [];
  let hiddenHunks = 0;
  let tooBigHunks = 0;
  let i = 0;
  // Lines before the first hunk (none once the header is taken out) pass through.
  while (i < lines.length && lines[i]!.kind !== 'hunk') out.push(lines[i++]!);
  while (i < lines.length) {
    const header = lines[i++]!;
    const body: PatchLine[] = [];
    while (i < lines.length && lines[i]!.kind !== 'hunk') body.push(lines[i++]!);
    const hunk = rematchHunk(body);
    if (hunk === null) {
      tooBigHunks++;
      out.push(header, ...body);
    } else if (hunk.some((l) => l.kind === 'add' || l.kind === 'del')) out.push(header, ...hunk);
    else hiddenHunks++;
  }
  return { lines: out, hiddenHunks, tooBigHunks };
}

/** One hunk's lines matched again ignoring whitespace, or null past the edit bound. */
function rematchHunk(body: readonly PatchLine[]): PatchLine[] | null {
  const oldSide: number[] = [];
  const newSide: number[] = [];
  /** The note line after a body line, by the line's position in `body`. */
  const noteAfter = new Map<number, PatchLine>();
  body.forEach((line, n) => {
    if (line.kind === 'note') {
      if (n > 0) noteAfter.set(n - 1, line);
      return;
    }
    if (line.kind === 'context' || line.kind === 'del') oldSide.push(n);
    if (line.kind === 'context' || line.kind === 'add') newSide.push(n);
  });
  const parts = diffArrays(
    oldSide.map((n) => key(body[n]!)),
    newSide.map((n) => key(body[n]!)),
    { maxEditLength: WHITESPACE_MAX_EDITS },
  );
  if (parts === undefined) return null;
  const out: PatchLine[] = [];
  const push = (line: PatchLine, from: number) => {
    out.push(line);
    const note = noteAfter.get(from);
    if (note) out.push(note);
  };
  let o = 0;
  let w = 0;
  for (const part of parts) {
    const count = part.count ?? part.value.length;
    for (let k = 0; k < count; k++) {
      if (part.removed) push(body[oldSide[o++]!]!, oldSide[o - 1]!);
      else if (part.added) push(body[newSide[w++]!]!, newSide[w - 1]!);
      else {
        const before = body[oldSide[o++]!]!;
        const afterAt = newSide[w++]!;
        const after = body[afterAt]!;
        // Shown as the new text, numbered on both sides like any unchanged line.
        push(
          before === after
            ? before
            : { kind: 'context', text: ` ${lineContent(after)}`, oldNo: before.oldNo, newNo: after.newNo },
          afterAt,
        );
      }
    }
  }
  return out;
}
