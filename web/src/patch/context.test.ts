import { describe, expect, it } from 'vitest';
import { parsePatch } from '../timeline/index.ts';
import { contextGaps, textLines, wholeFileLines, withContext } from './context.ts';
import { buildRows } from './rows.ts';

// A 30-line file whose lines 10 and 25 changed: two hunks with 3 lines of context.
const after = Array.from({ length: 30 }, (_, i) => (i === 9 ? 'TEN' : i === 24 ? 'TWENTY-FIVE' : `line ${i + 1}`));
const patch = parsePatch(
  [
    '@@ -7,7 +7,7 @@',
    ...[7, 8, 9].map((n) => ` line ${n}`),
    '-line 10',
    '+TEN',
    ...[11, 12, 13].map((n) => ` line ${n}`),
    '@@ -22,7 +22,7 @@',
    ...[22, 23, 24].map((n) => ` line ${n}`),
    '-line 25',
    '+TWENTY-FIVE',
    ...[26, 27, 28].map((n) => ` line ${n}`),
  ].join('\n') + '\n',
);

describe('context from the recorded file', () => {
  it('finds the gaps above each hunk and below the last', () => {
    expect(contextGaps(patch, 'after', 30)).toEqual([
      { hunk: 0, oldFrom: 1, newFrom: 1, count: 6 },
      { hunk: 1, oldFrom: 14, newFrom: 14, count: 8 },
      { hunk: -1, oldFrom: 29, newFrom: 29, count: 2 },
    ]);
  });

  it('fills an opened gap with the side text, numbered on both sides', () => {
    const lines = withContext(patch, 'after', after, new Set([1]));
    const filled = lines.filter((l) => l.extra);
    expect(filled.map((l) => [l.text, l.oldNo, l.newNo])).toEqual(
      [14, 15, 16, 17, 18, 19, 20, 21].map((n) => [` line ${n}`, n, n]),
    );
    // In place: just before the second hunk's header.
    const header = lines.findIndex((l) => l.text.startsWith('@@ -22'));
    expect(lines[header - 1]!.newNo).toBe(21);
    expect(
      withContext(patch, 'after', after, new Set([-1]))
        .slice(-2)
        .map((l) => l.text),
    ).toEqual([' line 29', ' line 30']);
  });

  it('lines taken from the recorded file are not folded away again', () => {
    const whole = wholeFileLines(after);
    expect(buildRows(whole, 'unified', new Set()).some((r) => r.kind === 'fold')).toBe(false);
    // Positive control: the same 30 unchanged lines from a stored patch fold.
    const stored = whole.map(({ extra: _extra, ...l }) => l);
    expect(buildRows(stored, 'unified', new Set()).some((r) => r.kind === 'fold')).toBe(true);
  });

  it('a whole side reads as numbered unchanged lines, and a final newline adds no line', () => {
    expect(textLines('a\nb\n')).toEqual(['a', 'b']);
    expect(textLines('a\nb')).toEqual(['a', 'b']);
    expect(wholeFileLines(['a', 'b']).map((l) => [l.kind, l.text, l.newNo])).toEqual([
      ['context', ' a', 1],
      ['context', ' b', 2],
    ]);
  });
});
