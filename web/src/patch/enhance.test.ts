import { describe, expect, it } from 'vitest';
import { emptyMarks, enhanceLines } from './enhance.ts';
import { loadHighlighter } from './highlight.ts';
import { parsePatch } from './lines.ts';
import { lineContent } from './rows.ts';
import { pairChangedLines } from './word-diff.ts';

const lines = parsePatch(
  [
    '@@ -1,2 +1,2 @@',
    ' const keep = 1;',
    '-const name = "old";',
    '+const name = "new";',
    '@@ -10,2 +10,2 @@',
    '-/* a comment',
    '+/* a longer comment',
    '  still the comment */',
  ].join('\n') + '\n',
);
const pairs = pairChangedLines(lines);
const text = (tokens: { text: string }[] | null) => tokens?.map((t) => t.text).join('') ?? null;

describe('highlighting and word marks of a patch, step by step', () => {
  it('marks the changed words of each removed line and its addition, without a highlighter', () => {
    const marks = emptyMarks(lines.length);
    const { touched, next } = enhanceLines(lines, pairs, null, 0, marks);
    expect(next).toBe(lines.length);
    expect(touched).toEqual([2, 3, 5, 6]);
    const changed = (i: number) => marks.ranges[i]!.map((r) => lineContent(lines[i]!).slice(r.start, r.end));
    expect(changed(2)).toEqual(['old']);
    expect(changed(3)).toEqual(['new']);
    expect(marks.tokens.every((t) => t === null)).toBe(true);
  });

  it('highlights each hunk per side, so a comment spanning lines stays one token', async () => {
    const hl = await loadHighlighter('typescript');
    const marks = emptyMarks(lines.length);
    const { touched } = enhanceLines(lines, pairs, hl, 0, marks);
    expect(touched).toEqual(expect.arrayContaining([1, 2, 3, 5, 6, 7]));
    for (const i of [1, 2, 3, 5, 6, 7]) expect(text(marks.tokens[i]!)).toBe(lineContent(lines[i]!));
    // The last line continues the comment opened above it on both sides.
    expect(marks.tokens[7]!.some((t) => t.cls.includes('comment'))).toBe(true);
    // Headers get no tokens.
    expect(marks.tokens[0]).toBeNull();
    expect(marks.tokens[4]).toBeNull();
  });

  it('stops after a number of lines and says where the next step starts', () => {
    const marks = emptyMarks(lines.length);
    expect(enhanceLines(lines, pairs, null, 0, marks, 3).next).toBe(3);
    // The pair at 2/3 began inside the first step; the one at 5/6 waits for the second.
    expect(marks.ranges[5]).toBeUndefined();
    expect(enhanceLines(lines, pairs, null, 3, marks, 3).next).toBe(6);
    expect(marks.ranges[5]).toBeDefined();
  });
});
