import { describe, expect, it } from 'vitest';
import { parsePatch } from './lines.ts';
import { pairChangedLines, WORD_DIFF_MAX_CHARS, wordRanges } from './word-diff.ts';

const patch = (...body: string[]) => parsePatch(['@@ -1,9 +1,9 @@', ...body].join('\n') + '\n');

describe('pairChangedLines', () => {
  it('pairs the i-th removed line of a run with the i-th added line after it', () => {
    const lines = patch(' a', '-b1', '-b2', '-b3', '+B1', '+B2', ' c', '+d', '-e', '+E');
    const pairs = pairChangedLines(lines);
    // indices: 0 hunk, 1 a, 2-4 dels, 5-6 adds, 7 c, 8 +d (alone), 9 -e, 10 +E
    expect([...pairs.entries()].sort((x, y) => x[0] - y[0])).toEqual([
      [2, 5],
      [3, 6],
      [5, 2],
      [6, 3],
      [9, 10],
      [10, 9],
    ]);
  });

  it('pairs across a "no newline at end of file" note between the runs', () => {
    const lines = patch('-old', '\\ No newline at end of file', '+new');
    expect(pairChangedLines(lines).get(1)).toBe(3);
  });

  it('does not pair a removal with an addition of a later run', () => {
    const lines = patch('-x', ' keep', '+y');
    expect(pairChangedLines(lines).size).toBe(0);
  });
});

describe('wordRanges', () => {
  it('marks only the words that changed on each side', () => {
    const r = wordRanges('const total = price * 2;', 'const total = price * count;');
    expect(r).toEqual({ before: [{ start: 22, end: 23 }], after: [{ start: 22, end: 27 }] });
  });

  it('marks an insertion on the new side only', () => {
    const r = wordRanges('signIn(email)', 'signIn(email, remember)');
    expect(r?.before).toEqual([]);
    expect('signIn(email, remember)'.slice(r!.after[0]!.start, r!.after[r!.after.length - 1]!.end)).toContain(
      'remember',
    );
  });

  it('gives nothing to mark when the lines are mostly different', () => {
    expect(wordRanges('import a from "b";', 'export default {};')).toBeNull();
  });

  it('bound: lines over the length cap are not diffed', () => {
    const long = 'x '.repeat(WORD_DIFF_MAX_CHARS);
    expect(wordRanges(long, `${long}y`)).toBeNull();
  });
});
