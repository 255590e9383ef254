import { describe, expect, it } from 'vitest';
import { parsePatch } from './lines.ts';
import {
  closedGaps,
  CONTEXT_STEP_LINES,
  gapButtons,
  contextGaps,
  gapHolding,
  textLines,
  wholeFileLines,
  wholeFileView,
  withContext,
} from './context.ts';
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

  it('a gap opened a step at a time shows the lines nearest its hunk first; the rest stays closed', () => {
    const gaps = contextGaps(patch, 'after', 30);
    const partly = new Map([
      [1, 3],
      [-1, 1],
    ]);
    const lines = withContext(patch, 'after', after, partly);
    // Above the second hunk: its 3 nearest lines (19-21), lines 14-18 still closed.
    expect(lines.filter((l) => l.extra).map((l) => l.newNo)).toEqual([19, 20, 21, 29]);
    const closed = closedGaps(lines, gaps, partly);
    expect([...closed.above.values()]).toEqual([
      { hunk: 0, count: 6 },
      { hunk: 1, count: 5 },
    ]);
    expect(closed.below).toEqual({ hunk: -1, count: 1 });
    // Opened past its size, a gap is whole and no button is left for it.
    const whole = new Map([[1, 99]]);
    expect([...closedGaps(withContext(patch, 'after', after, whole), gaps, whole).above.keys()]).toHaveLength(1);
  });

  it(`a gap's buttons: ${CONTEXT_STEP_LINES} lines at a time, and all of them as a second choice past that`, () => {
    expect(gapButtons(443, 'above')).toEqual({ step: 'Show 20 of 443 unchanged lines above', all: 'Show all 443' });
    expect(gapButtons(21, 'below')).toEqual({ step: 'Show 20 of 21 unchanged lines below', all: 'Show all 21' });
    expect(gapButtons(20, 'above')).toEqual({ step: 'Show 20 unchanged lines above', all: null });
    expect(gapButtons(1, 'below')).toEqual({ step: 'Show 1 unchanged line below', all: null });
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
    expect(wholeFileLines(['a', 'b']).map((l) => [l.kind, l.text, l.oldNo, l.newNo])).toEqual([
      ['context', ' a', null, 1],
      ['context', ' b', null, 2],
    ]);
  });
});

describe('the gaps still closed', () => {
  const gaps = contextGaps(patch, 'after', 30);

  it('places each closed gap on its hunk header, and the tail below', () => {
    const closed = closedGaps(patch, gaps, new Set());
    const second = patch.findIndex((l) => l.text.startsWith('@@ -22'));
    expect([...closed.above]).toEqual([
      [0, { hunk: 0, count: 6 }],
      [second, { hunk: 1, count: 8 }],
    ]);
    expect(closed.below).toEqual({ hunk: -1, count: 2 });
  });

  it('leaves out the gaps the reader opened, on the lines that now show them', () => {
    const lines = withContext(patch, 'after', after, new Set([1, -1]));
    const closed = closedGaps(lines, gaps, new Set([1, -1]));
    expect([...closed.above]).toEqual([[0, { hunk: 0, count: 6 }]]);
    expect(closed.below).toBeNull();
  });

  it('finds the gap holding a line of either side, and none for a line in a hunk', () => {
    expect(gapHolding(gaps, 'after', 3)?.hunk).toBe(0);
    expect(gapHolding(gaps, 'before', 21)?.hunk).toBe(1);
    expect(gapHolding(gaps, 'after', 30)?.hunk).toBe(-1);
    expect(gapHolding(gaps, 'after', 10)).toBeUndefined();
  });
});

describe('the whole file, as the patch sees it', () => {
  // 10 lines; two lines inserted after line 2, line 6 removed, line 9 changed.
  const before = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`);
  const afterText = [
    'line 1',
    'line 2',
    'new a',
    'new b',
    'line 3',
    'line 4',
    'line 5',
    'line 7',
    'line 8',
    'NINE',
    'line 10',
  ];
  const stored = parsePatch(
    [
      '@@ -1,5 +1,7 @@',
      ' line 1',
      ' line 2',
      '+new a',
      '+new b',
      ' line 3',
      ' line 4',
      ' line 5',
      '@@ -6,5 +8,4 @@',
      '-line 6',
      ' line 7',
      ' line 8',
      '-line 9',
      '+NINE',
      ' line 10',
    ].join('\n') + '\n',
  );
  const shape = (ls: ReturnType<typeof wholeFileView>) => ls.map((l) => [l.kind, l.text.slice(1), l.oldNo, l.newNo]);

  it('after: added lines marked, every line with its real old and new numbers', () => {
    expect(shape(wholeFileView(stored, 'after', afterText))).toEqual([
      ['context', 'line 1', 1, 1],
      ['context', 'line 2', 2, 2],
      ['add', 'new a', null, 3],
      ['add', 'new b', null, 4],
      ['context', 'line 3', 3, 5],
      ['context', 'line 4', 4, 6],
      ['context', 'line 5', 5, 7],
      ['context', 'line 7', 7, 8],
      ['context', 'line 8', 8, 9],
      ['add', 'NINE', null, 10],
      ['context', 'line 10', 10, 11],
    ]);
  });

  it('before: removed lines marked, numbered on both sides', () => {
    expect(shape(wholeFileView(stored, 'before', before))).toEqual([
      ['context', 'line 1', 1, 1],
      ['context', 'line 2', 2, 2],
      ['context', 'line 3', 3, 5],
      ['context', 'line 4', 4, 6],
      ['context', 'line 5', 5, 7],
      ['del', 'line 6', 6, null],
      ['context', 'line 7', 7, 8],
      ['context', 'line 8', 8, 9],
      ['del', 'line 9', 9, null],
      ['context', 'line 10', 10, 11],
    ]);
  });

  it('fills the gaps between hunks and below the last from the side text', () => {
    const lines = wholeFileView(patch, 'after', after);
    expect(lines).toHaveLength(30);
    expect(shape(lines).slice(8, 11)).toEqual([
      ['context', 'line 9', 9, 9],
      ['add', 'TEN', null, 10],
      ['context', 'line 11', 11, 11],
    ]);
    expect(shape(lines).at(-1)).toEqual(['context', 'line 30', 30, 30]);
  });

  it('a patch that does not account for the side line for line lists it numbered on its own side', () => {
    // Cut at the cap: the last hunk claims lines the listing cannot place.
    const lines = wholeFileView(stored, 'after', afterText.slice(0, 6));
    expect(shape(lines)[2]).toEqual(['context', 'new a', null, 3]);
  });
});
