import type { Highlighter } from './highlight.ts';
import type { PatchLine } from './lines.ts';
import { lineContent } from './rows.ts';
import type { Token } from './tokens.ts';
import { wordRanges, type Range } from './word-diff.ts';

/** Lines highlighted and word-diffed per task, so a long patch never holds the page for long. */
export const ENHANCE_LINES = 300;

/** What each line of a patch has been given so far: its highlighted tokens and its changed words. */
export interface LineMarks {
  tokens: (Token[] | null)[];
  ranges: (Range[] | undefined)[];
}

export const emptyMarks = (lineCount: number): LineMarks => ({
  tokens: new Array<Token[] | null>(lineCount).fill(null),
  ranges: new Array<Range[] | undefined>(lineCount),
});

/** Highlights one hunk's stretch of lines: each side as one text, so multi-line tokens stay whole. */
function highlightStretch(hl: Highlighter, lines: readonly PatchLine[], from: number, to: number, marks: LineMarks) {
  const oldSide: number[] = [];
  const newSide: number[] = [];
  for (let i = from; i < to; i++) {
    const k = lines[i]!.kind;
    if (k === 'context' || k === 'del') oldSide.push(i);
    if (k === 'context' || k === 'add') newSide.push(i);
  }
  const apply = (side: number[], only: 'del' | 'new') => {
    if (side.length === 0) return;
    const out = hl(side.map((i) => lineContent(lines[i]!)).join('\n'));
    if (!out || out.length !== side.length) return;
    side.forEach((i, n) => {
      if (only === 'new' || lines[i]!.kind === 'del') marks.tokens[i] = out[n]!;
    });
  };
  apply(oldSide, 'del');
  apply(newSide, 'new');
}

/**
 * Gives lines `from..from+count` their changed words (each removed line and its paired addition from
 * `pairs`) and, with a highlighter, their tokens; a hunk header or meta line ends a stretch. Returns
 * the lines that changed and where the next step starts (the line count when done).
 */
export function enhanceLines(
  lines: readonly PatchLine[],
  pairs: ReadonlyMap<number, number>,
  hl: Highlighter | null,
  from: number,
  marks: LineMarks,
  count = ENHANCE_LINES,
): { touched: number[]; next: number } {
  const to = Math.min(lines.length, from + count);
  const touched: number[] = [];
  for (let i = from; i < to; i++) {
    const partner = pairs.get(i);
    if (partner === undefined || lines[i]!.kind !== 'del') continue;
    const r = wordRanges(lineContent(lines[i]!), lineContent(lines[partner]!));
    marks.ranges[i] = r?.before ?? [];
    marks.ranges[partner] = r?.after ?? [];
    touched.push(i, partner);
  }
  if (hl) {
    let start = from;
    for (let i = from; i <= to; i++) {
      if (i === to || lines[i]!.kind === 'hunk' || lines[i]!.kind === 'meta') {
        if (i > start) highlightStretch(hl, lines, start, i, marks);
        start = i + 1;
      }
    }
    for (let i = from; i < to; i++) touched.push(i);
  }
  return { touched, next: to };
}
