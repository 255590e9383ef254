import { describe, expect, it } from 'vitest';
import { parsePatch } from './lines.ts';
import { bodyLines } from './header.ts';
import { ignoreWhitespace, WHITESPACE_MAX_EDITS } from './whitespace.ts';

const hunks = (...lines: string[]) => bodyLines(parsePatch(lines.join('\n') + '\n'));
const shown = (lines: ReturnType<typeof hunks>) => lines.map((l) => [l.kind, l.text, l.oldNo, l.newNo]);

describe('hiding whitespace changes', () => {
  it('pairs a removed and an added line that differ only in whitespace into one unchanged line', () => {
    const view = ignoreWhitespace(
      hunks('@@ -1,3 +1,3 @@', ' a', '-if (x) {', '+if (x)  {', '-\treturn 1;', '+  return 2;'),
    );
    expect(shown(view.lines)).toEqual([
      ['hunk', '@@ -1,3 +1,3 @@', null, null],
      ['context', ' a', 1, 1],
      ['context', ' if (x)  {', 2, 2],
      ['del', '-\treturn 1;', 3, null],
      ['add', '+  return 2;', null, 3],
    ]);
    expect(view.hiddenHunks).toBe(0);
  });

  it('drops a hunk that only re-indented lines, and counts it', () => {
    const view = ignoreWhitespace(
      hunks('@@ -1,2 +1,2 @@', '-  a', '-  b', '+    a', '+    b', '@@ -10 +10 @@', '-x', '+y'),
    );
    expect(view.hiddenHunks).toBe(1);
    expect(view.lines.map((l) => l.text)).toEqual(['@@ -10 +10 @@', '-x', '+y']);
  });

  it('keeps an added blank line: -w ignores whitespace inside lines, not lines of whitespace', () => {
    const view = ignoreWhitespace(hunks('@@ -1 +1,2 @@', ' a', '+'));
    expect(view.lines.map((l) => l.kind)).toEqual(['hunk', 'context', 'add']);
  });

  it('matches lines across a moved order as git does: the longest common run stays, the rest is changed', () => {
    const view = ignoreWhitespace(hunks('@@ -1,2 +1,2 @@', '-a', '-b', '+ b', '+a'));
    expect(view.lines.filter((l) => l.kind !== 'hunk').map((l) => l.kind)).toHaveLength(3);
    expect(view.lines.filter((l) => l.kind === 'context')).toHaveLength(1);
  });

  it('keeps a missing-newline note after the line it belongs to', () => {
    const view = ignoreWhitespace(
      hunks('@@ -1 +1 @@', '-a', '\\ No newline at end of file', '+ a', '\\ No newline at end of file'),
    );
    expect(view.hiddenHunks).toBe(1);
    const kept = ignoreWhitespace(hunks('@@ -1 +1 @@', '-a', '+b', '\\ No newline at end of file'));
    expect(kept.lines.map((l) => l.kind)).toEqual(['hunk', 'del', 'add', 'note']);
  });

  it('shows a hunk past the edit bound as stored and says so', () => {
    const n = WHITESPACE_MAX_EDITS + 10;
    const lines = ['@@ -1,' + n + ' +1,' + n + ' @@'];
    for (let i = 0; i < n; i++) lines.push(`-old ${i}`);
    for (let i = 0; i < n; i++) lines.push(`+new ${i}`);
    const view = ignoreWhitespace(hunks(...lines));
    expect(view.tooBigHunks).toBe(1);
    expect(view.lines).toHaveLength(2 * n + 1);
    // Positive control: under the bound the same shape is re-matched.
    const small = ['@@ -1,3 +1,3 @@', '-old 0', '-old 1', '-old 2', '+new 0', '+new 1', '+new 2'];
    expect(ignoreWhitespace(hunks(...small)).tooBigHunks).toBe(0);
  });
});
