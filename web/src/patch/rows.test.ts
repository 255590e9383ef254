import { describe, expect, it } from 'vitest';
import { parsePatch } from './lines.ts';
import { buildRows, FOLD_KEEP_LINES, lineContent, skippedBeforeHunks } from './rows.ts';

const ctx = (n: number, from = 1) => Array.from({ length: n }, (_, i) => ` line ${from + i}`);

function hunkPatch(body: string[]): string {
  return ['diff --git a/f.ts b/f.ts', '--- a/f.ts', '+++ b/f.ts', '@@ -1,40 +1,40 @@', ...body].join('\n') + '\n';
}

describe('buildRows: folding unchanged context', () => {
  it('folds a long run between two changes, keeping three lines next to each', () => {
    const lines = parsePatch(hunkPatch(['-a', '+A', ...ctx(20), '-b', '+B']));
    const rows = buildRows(lines, 'unified', new Set());
    const fold = rows.find((r) => r.kind === 'fold');
    expect(fold).toEqual({ kind: 'fold', id: 6 + FOLD_KEEP_LINES, count: 20 - 2 * FOLD_KEEP_LINES });
    // 4 meta/hunk + 2 changes + 3 kept + fold + 3 kept + 2 changes
    expect(rows).toHaveLength(4 + 2 + 3 + 1 + 3 + 2);
  });

  it('a run at the start or end of a hunk keeps lines only on its changed side', () => {
    const lines = parsePatch(hunkPatch([...ctx(15), '-x', '+y', ...ctx(15, 20)]));
    const folds = buildRows(lines, 'unified', new Set()).filter((r) => r.kind === 'fold');
    expect(folds.map((f) => f.kind === 'fold' && f.count)).toEqual([12, 12]);
  });

  it('leaves short runs alone (git default context)', () => {
    const lines = parsePatch(hunkPatch([...ctx(3), '-x', '+y', ...ctx(3)]));
    expect(buildRows(lines, 'unified', new Set()).some((r) => r.kind === 'fold')).toBe(false);
  });

  it('an opened fold shows every line it hid', () => {
    const lines = parsePatch(hunkPatch(['-a', '+A', ...ctx(20), '-b', '+B']));
    const fold = buildRows(lines, 'unified', new Set()).find((r) => r.kind === 'fold');
    const open = buildRows(lines, 'unified', new Set([fold!.kind === 'fold' ? fold!.id : -1]));
    expect(open.some((r) => r.kind === 'fold')).toBe(false);
    expect(open).toHaveLength(lines.length);
  });
});

describe('buildRows: split layout', () => {
  it('puts removed lines left and added lines right, padding the shorter side', () => {
    const lines = parsePatch(hunkPatch([' keep', '-a', '-b', '+A', ' end']));
    const rows = buildRows(lines, 'split', new Set());
    expect(rows.slice(4)).toEqual([
      { kind: 'pair', left: 4, right: 4 },
      { kind: 'pair', left: 5, right: 7 },
      { kind: 'pair', left: 6, right: null },
      { kind: 'pair', left: 8, right: 8 },
    ]);
    expect(rows.slice(0, 4).every((r) => r.kind === 'line')).toBe(true);
  });

  it('an addition with no removal before it has an empty left side', () => {
    const lines = parsePatch(hunkPatch([' keep', '+new']));
    expect(buildRows(lines, 'split', new Set()).at(-1)).toEqual({ kind: 'pair', left: null, right: 5 });
  });
});

describe('lineContent', () => {
  it('drops the sign of changed and context lines only', () => {
    const lines = parsePatch(hunkPatch([' same', '-old', '+new']));
    expect(lines.map(lineContent).slice(3)).toEqual(['@@ -1,40 +1,40 @@', 'same', 'old', 'new']);
  });
});

describe('skippedBeforeHunks', () => {
  it('counts the unchanged old lines before each hunk that the patch does not carry', () => {
    const lines = parsePatch(
      ['--- a/f', '+++ b/f', '@@ -5,3 +5,3 @@', ' a', '-b', '+B', ' c', '@@ -20,2 +20,2 @@', '-d', '+D', ' e'].join(
        '\n',
      ),
    );
    expect([...skippedBeforeHunks(lines)]).toEqual([
      [2, 4],
      [7, 12],
    ]);
  });

  it('an added file skips nothing', () => {
    expect(skippedBeforeHunks(parsePatch('@@ -0,0 +1,2 @@\n+a\n+b\n')).size).toBe(0);
  });
});
