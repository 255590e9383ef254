import type { ContentSide } from '../../../shared/index.ts';
import type { PatchLine } from './lines.ts';

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** Unchanged lines of the file the stored patch leaves out: before hunk `hunk` (0-based), or after the last (-1). */
export interface Gap {
  hunk: number;
  /** First line of the gap on each side (1-based). */
  oldFrom: number;
  newFrom: number;
  count: number;
}

/** A file's text as lines (a final newline ends the last line, it does not start another). */
export function textLines(text: string): string[] {
  const out = text.split('\n');
  if (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out;
}

/**
 * The gaps between the stored hunks, and after the last one up to the end of the recorded side
 * (`sideLineCount` lines on `side`). Unchanged lines are the same on both sides, so one side's text
 * fills every gap; a gap's numbers on the other side follow from the hunk headers.
 */
export function contextGaps(lines: readonly PatchLine[], side: ContentSide, sideLineCount: number): Gap[] {
  const gaps: Gap[] = [];
  let nextOld = 1;
  let nextNew = 1;
  let hunk = 0;
  for (const line of lines) {
    if (line.kind !== 'hunk') continue;
    const m = HUNK.exec(line.text);
    if (!m) continue;
    const oldCount = m[2] === undefined ? 1 : Number(m[2]);
    const newCount = m[4] === undefined ? 1 : Number(m[4]);
    // An empty side's start is the line before the hunk (`-0,0` for an added file).
    const oldStart = oldCount === 0 ? Number(m[1]) + 1 : Number(m[1]);
    const newStart = newCount === 0 ? Number(m[3]) + 1 : Number(m[3]);
    const count = oldStart - nextOld;
    if (count > 0) gaps.push({ hunk, oldFrom: nextOld, newFrom: nextNew, count });
    nextOld = oldStart + oldCount;
    nextNew = newStart + newCount;
    hunk++;
  }
  const tail = sideLineCount - (side === 'after' ? nextNew : nextOld) + 1;
  if (hunk > 0 && tail > 0) gaps.push({ hunk: -1, oldFrom: nextOld, newFrom: nextNew, count: tail });
  return gaps;
}

/** Unchanged lines one click on a gap's button shows; its second button shows them all. */
export const CONTEXT_STEP_LINES = 20;

/**
 * Gaps opened, by `Gap.hunk`: how many of their lines are shown (a Set: every line of each). A gap
 * above a hunk opens upwards from the hunk, the one below the last hunk downwards from it.
 */
export type OpenGaps = ReadonlySet<number> | ReadonlyMap<number, number>;

/** Lines of `gap` shown under `open`. */
export function shownOf(gap: Gap, open: OpenGaps): number {
  const n =
    open instanceof Map ? (open.get(gap.hunk) ?? 0) : (open as ReadonlySet<number>).has(gap.hunk) ? Infinity : 0;
  return Math.min(gap.count, n);
}

function gapLines(gap: Gap, side: ContentSide, text: readonly string[], shown: number): PatchLine[] {
  // Above a hunk the lines nearest it are shown first; below the last, the nearest too.
  const skip = gap.hunk === -1 ? 0 : gap.count - shown;
  return Array.from({ length: shown }, (_, i) => {
    const k = skip + i;
    const no = (side === 'after' ? gap.newFrom : gap.oldFrom) + k;
    return {
      kind: 'context' as const,
      text: ` ${text[no - 1] ?? ''}`,
      oldNo: gap.oldFrom + k,
      newNo: gap.newFrom + k,
      extra: true as const,
    };
  });
}

/** The patch's lines with the gaps in `open` (by `Gap.hunk`) filled, as far as opened, from one recorded side's text. */
export function withContext(
  lines: readonly PatchLine[],
  side: ContentSide,
  text: readonly string[],
  open: OpenGaps,
): PatchLine[] {
  if (open.size === 0) return [...lines];
  const gaps = new Map(contextGaps(lines, side, text.length).map((g) => [g.hunk, g]));
  const out: PatchLine[] = [];
  let hunk = 0;
  for (const line of lines) {
    if (line.kind === 'hunk') {
      const gap = gaps.get(hunk);
      if (gap) out.push(...gapLines(gap, side, text, shownOf(gap, open)));
      hunk++;
    }
    out.push(line);
  }
  const tail = gaps.get(-1);
  if (tail) {
    // After a `\ No newline` note nothing follows; a tail exists only when the last line had one.
    out.push(...gapLines(tail, side, text, shownOf(tail, open)));
  }
  return out;
}

/** One recorded side as a listing of unchanged lines, numbered on that side only (the other side's numbers unknown). */
export function wholeFileLines(text: readonly string[], side: ContentSide = 'after'): PatchLine[] {
  return text.map((t, i) => ({
    kind: 'context',
    text: ` ${t}`,
    oldNo: side === 'before' ? i + 1 : null,
    newNo: side === 'after' ? i + 1 : null,
    extra: true,
  }));
}

const SIGNS = { context: ' ', add: '+', del: '-' } as const;

/**
 * One recorded side of a file whole, as the patch sees it: the lines the change added (after) or
 * removed (before) keep their kind, every line carries its real old and new number (null where it
 * has none), and the unchanged lines between the hunks are numbered on both sides. When the patch
 * does not account for the side's text line for line (cut at the per-file cap, or not this side's
 * patch), the side is listed numbered on its own side only.
 */
export function wholeFileView(lines: readonly PatchLine[], side: ContentSide, text: readonly string[]): PatchLine[] {
  const out: PatchLine[] = [];
  const own = (l: { oldNo: number | null; newNo: number | null }) => (side === 'after' ? l.newNo : l.oldNo);
  // Unchanged lines between hunks: both numbers move together.
  let nextOld = 1;
  let nextNew = 1;
  const fillTo = (sideNo: number): boolean => {
    while ((side === 'after' ? nextNew : nextOld) < sideNo) {
      const no = side === 'after' ? nextNew : nextOld;
      if (no > text.length) return false;
      out.push({ kind: 'context', text: ` ${text[no - 1]!}`, oldNo: nextOld++, newNo: nextNew++, extra: true });
    }
    return true;
  };
  for (const line of lines) {
    if (line.kind === 'hunk') {
      const m = HUNK.exec(line.text);
      if (!m) return wholeFileLines(text, side);
      const oldCount = m[2] === undefined ? 1 : Number(m[2]);
      const newCount = m[4] === undefined ? 1 : Number(m[4]);
      const start =
        side === 'after'
          ? newCount === 0
            ? Number(m[3]) + 1
            : Number(m[3])
          : oldCount === 0
            ? Number(m[1]) + 1
            : Number(m[1]);
      if (!fillTo(start)) return wholeFileLines(text, side);
      continue;
    }
    if (line.kind !== 'context' && line.kind !== 'add' && line.kind !== 'del') continue;
    if (line.kind === 'context' || line.kind === (side === 'after' ? 'add' : 'del')) {
      const no = own(line);
      if (no === null || no !== (side === 'after' ? nextNew : nextOld) || no > text.length)
        return wholeFileLines(text, side);
      // The side's own text (a whitespace-free patch's unchanged line may carry the other side's).
      out.push({ ...line, text: `${SIGNS[line.kind]}${text[no - 1]!}`, extra: true });
    }
    if (line.oldNo !== null) nextOld = line.oldNo + 1;
    if (line.newNo !== null) nextNew = line.newNo + 1;
  }
  if (!fillTo(text.length + 1) || out.length !== text.length) return wholeFileLines(text, side);
  return out;
}

/** A gap still (partly) closed: the hunk it is above (-1: below the last) and its number of lines still hidden. */
export interface ClosedGap {
  hunk: number;
  count: number;
}

/**
 * The gaps of `gaps` not in `open`, placed on the shown `lines`: each above the hunk header at its
 * line index, and the one below the last hunk.
 */
export function closedGaps(
  lines: readonly PatchLine[],
  gaps: readonly Gap[],
  open: OpenGaps,
): { above: Map<number, ClosedGap>; below: ClosedGap | null } {
  const byHunk = new Map(gaps.map((g) => [g.hunk, g.count - shownOf(g, open)]));
  const above = new Map<number, ClosedGap>();
  let hunk = 0;
  lines.forEach((line, i) => {
    if (line.kind !== 'hunk') return;
    const count = byHunk.get(hunk);
    if (count !== undefined && count > 0) above.set(i, { hunk, count });
    hunk++;
  });
  const tail = byHunk.get(-1);
  return { above, below: tail !== undefined && tail > 0 ? { hunk: -1, count: tail } : null };
}

/** The gap of `gaps` that holds line `line` of `side` (1-based), or undefined. */
export function gapHolding(gaps: readonly Gap[], side: ContentSide, line: number): Gap | undefined {
  return gaps.find((g) => {
    const from = side === 'after' ? g.newFrom : g.oldFrom;
    return line >= from && line < from + g.count;
  });
}

/**
 * The buttons of a closed gap of `count` lines: one showing the next `CONTEXT_STEP_LINES`
 * (`Show 20 of 443 unchanged lines above`) and, past that many, a second showing them all.
 */
export function gapButtons(count: number, where: 'above' | 'below'): { step: string; all: string | null } {
  const unit = count === 1 ? 'line' : 'lines';
  if (count <= CONTEXT_STEP_LINES) return { step: `Show ${count} unchanged ${unit} ${where}`, all: null };
  return { step: `Show ${CONTEXT_STEP_LINES} of ${count} unchanged ${unit} ${where}`, all: `Show all ${count}` };
}
