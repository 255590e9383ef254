import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../test-support/temp-repo.ts';
import { ignoreWhitespaceHunks } from './ignore-whitespace.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** The hunks git itself prints for `git diff --no-index -w` (no config, no pager). */
function gitHunks(before: string, after: string): string {
  const dir = createTempDir('rundiff-ws-');
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, 'a'), before);
  fs.writeFileSync(path.join(dir, 'b'), after);
  let out = '';
  try {
    out = execFileSync('git', ['diff', '--no-index', '--no-color', '-w', 'a', 'b'], {
      cwd: dir,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    });
  } catch (err) {
    out = (err as { stdout: string }).stdout; // exit 1: the files differ
  }
  const at = out.indexOf('\n@@');
  return at === -1 ? '' : out.slice(at + 1);
}

describe('hunks ignoring all whitespace', () => {
  it('a line that only changed indentation is context; a real change next to it is a change', () => {
    expect(ignoreWhitespaceHunks('a\nb\nc\n', 'a\n  b\nC\n', 100)).toEqual({
      hunks: '@@ -1,3 +1,3 @@\n a\n   b\n-c\n+C\n',
      additions: 1,
      deletions: 1,
    });
  });

  it('whitespace everywhere and nothing else: no hunk at all', () => {
    expect(ignoreWhitespaceHunks('if (a) {\n  b();\n}\n', 'if (a)  {\n\tb( );\n}\n', 100)).toEqual({
      hunks: '',
      additions: 0,
      deletions: 0,
    });
  });

  it('answers as git diff -w does: context, merged and separate hunks, added and removed lines, no newline at the end', () => {
    const lines = (n: number, f = (i: number) => `line ${i}`) =>
      Array.from({ length: n }, (_, i) => `${f(i)}\n`).join('');
    const cases: [string, string][] = [
      ['a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n', 'a\n  b\nC\nd\ne\nf\ng\nh\ni\nJ'],
      [
        lines(40),
        lines(40, (i) => (i === 5 || i === 30 ? `changed ${i}` : i % 3 === 0 ? `  line ${i} ` : `line ${i}`)),
      ],
      [lines(20), lines(20, (i) => (i === 3 || i === 10 ? `x${i}` : `line ${i}`))],
      [lines(20), lines(20, (i) => (i === 3 || i === 11 ? `x${i}` : `line ${i}`))],
      ['', 'new\n  file\n'],
      ['gone\n', ''],
      ['a\nb', 'a\nB'],
      ['x\ny\n', 'x\n\ty\nz\n'],
    ];
    for (const [before, after] of cases)
      expect(ignoreWhitespaceHunks(before, after, 1_000)?.hunks).toBe(gitHunks(before, after));
  });

  it('a missing newline at the end counts as whitespace, as with git -w', () => {
    expect(ignoreWhitespaceHunks('a\nb', 'a\nb\n', 100)?.hunks).toBe('');
    expect(gitHunks('a\nb', 'a\nb\n')).toBe('');
  });

  it('gives up as null when jsdiff runs out of its time budget (the caller keeps the stored patch)', () => {
    const a = Array.from({ length: 1_500 }, (_, i) => `a${(i * 7919) % 1_500}\n`).join('');
    const b = Array.from({ length: 1_500 }, (_, i) => `a${(i * 104_729) % 1_500}\n`).join('');
    expect(ignoreWhitespaceHunks(a, b, 1)).toBeNull();
    // control: the same sides with a budget that fits are answered
    expect(ignoreWhitespaceHunks(a, b, 60_000)).not.toBeNull();
  });
});
