import { describe, expect, it } from 'vitest';
import { parsePatch } from './lines.ts';

describe('parsePatch', () => {
  it('B24: numbers old and new lines through a hunk, keeping headers as meta', () => {
    const patch = [
      'diff --git a/src/a.ts b/src/a.ts',
      'index 1111111..2222222 100644',
      '--- a/src/a.ts',
      '+++ b/src/a.ts',
      '@@ -10,4 +10,5 @@ function f() {',
      ' keep',
      '-old',
      '+new',
      '+added',
      ' tail',
      ' end',
      '',
    ].join('\n');
    const lines = parsePatch(patch);
    expect(lines.map((l) => [l.kind, l.oldNo, l.newNo])).toEqual([
      ['meta', null, null],
      ['meta', null, null],
      ['meta', null, null],
      ['meta', null, null],
      ['hunk', null, null],
      ['context', 10, 10],
      ['del', 11, null],
      ['add', null, 11],
      ['add', null, 12],
      ['context', 12, 13],
      ['context', 13, 14],
    ]);
  });

  it('treats ---/+++ inside a hunk as content, not as headers', () => {
    const patch = ['--- a/x', '+++ b/x', '@@ -1,2 +1,2 @@', '--- old rule', '+++ new rule', ' same', ''].join('\n');
    const kinds = parsePatch(patch).map((l) => l.kind);
    expect(kinds).toEqual(['meta', 'meta', 'hunk', 'del', 'add', 'context']);
  });

  it('handles several hunks, single-line counts, new files and the no-newline marker', () => {
    const patch = [
      'diff --git a/n.txt b/n.txt',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/n.txt',
      '@@ -0,0 +1 @@',
      '+only',
      '\\ No newline at end of file',
      '@@ -5 +6,2 @@',
      '-x',
      '+y',
      '+z',
    ].join('\n');
    const lines = parsePatch(patch);
    expect(lines.map((l) => [l.kind, l.oldNo, l.newNo])).toEqual([
      ['meta', null, null],
      ['meta', null, null],
      ['meta', null, null],
      ['meta', null, null],
      ['hunk', null, null],
      ['add', null, 1],
      ['note', null, null],
      ['hunk', null, null],
      ['del', 5, null],
      ['add', null, 6],
      ['add', null, 7],
    ]);
  });

  it('keeps markup-looking text verbatim (rendered as text by the view)', () => {
    const lines = parsePatch('@@ -1 +1 @@\n-<b>\n+<script>alert(1)</script>\n');
    expect(lines[2]).toEqual({ kind: 'add', text: '+<script>alert(1)</script>', oldNo: null, newNo: 1 });
  });

  it('ends cleanly when a truncated patch stops mid-hunk', () => {
    const lines = parsePatch('@@ -1,100 +1,100 @@\n a\n-b\n');
    expect(lines.map((l) => l.kind)).toEqual(['hunk', 'context', 'del']);
  });
});
