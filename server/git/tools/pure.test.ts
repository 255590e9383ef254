import { describe, expect, it, onTestFinished } from 'vitest';
import { createTempRepo } from '../../test-support/index.ts';
import { keyFromText } from '../../paths/index.ts';
import { findStanzaStarts, parseDiffOutput } from './diff-parse.ts';
import { blobOid, countLines, newFileStanza } from './new-file-patch.ts';
import { cutPage } from './paging.ts';
import { parseStatusV2 } from './porcelain.ts';

describe('parseStatusV2', () => {
  it('reads branch headers, renames with their original name, conflicts and names with spaces and newlines', () => {
    const oid = 'a'.repeat(40);
    const buf = Buffer.from(
      [
        `# branch.oid ${oid}`,
        '# branch.head feature',
        '# branch.upstream origin/feature',
        '# branch.ab +2 -3',
        `1 .M N... 100644 100644 100644 ${oid} ${oid} with space.txt`,
        `2 R. N... 100644 100644 100644 ${oid} ${oid} R100 new\nname -> x`,
        'old name',
        `u UU N... 100644 100644 100644 100644 ${oid} ${oid} ${oid} both.txt`,
        '? -dash',
        '',
      ].join('\0'),
      'utf8',
    );
    const r = parseStatusV2(buf);
    expect(r).toMatchObject({ oid, head: 'feature', upstream: 'origin/feature', ahead: 2, behind: 3 });
    expect(r.entries).toEqual([
      { kind: 'changed', x: '.', y: 'M', path: 'with space.txt', oldPath: null },
      { kind: 'renamed', x: 'R', y: '.', path: 'new\nname -> x', oldPath: 'old name' },
      { kind: 'unmerged', x: 'U', y: 'U', path: 'both.txt', oldPath: null },
      { kind: 'untracked', x: '?', y: '?', path: '-dash', oldPath: null },
    ]);
  });

  it('reports an unborn branch and a detached HEAD as null', () => {
    expect(parseStatusV2(Buffer.from('# branch.oid (initial)\0# branch.head main\0')).oid).toBeNull();
    expect(parseStatusV2(Buffer.from(`# branch.oid ${'b'.repeat(40)}\0# branch.head (detached)\0`)).head).toBeNull();
  });
});

describe('parseDiffOutput', () => {
  it('pairs raw, numstat and patch stanzas of one -z output, renames and binary included', () => {
    const repo = createTempRepo({
      files: { 'a.txt': 'a\nb\n', 'old.txt': 'same\nsame\nsame\n', 'bin.dat': Buffer.from([0, 1, 2]) },
    });
    onTestFinished(() => repo.cleanup());
    repo.write('a.txt', 'a\nc\n');
    repo.git('mv', 'old.txt', 'new name.txt');
    repo.write('bin.dat', Buffer.from([0, 1, 3]));
    repo.git('add', '-A');
    const out = Buffer.from(
      repo.git('diff', '--cached', '--raw', '--numstat', '-p', '-z', '-M', '--full-index'),
      'latin1',
    );
    const parsed = parseDiffOutput(out, false);
    expect(parsed.entries.map((e) => [e.path, e.oldPath, e.status, e.additions, e.deletions, e.binary])).toEqual([
      ['a.txt', null, 'M', 1, 1, false],
      ['bin.dat', null, 'M', 0, 0, true],
      ['new name.txt', 'old.txt', 'R', 0, 0, false],
    ]);
    const stanzas = parsed.entries.map((e) => parsed.patch.subarray(e.stanza!.start, e.stanza!.end).toString('utf8'));
    expect(stanzas[0]).toMatch(/^diff --git a\/a.txt b\/a.txt\n[\s\S]*\+c\n$/);
    expect(stanzas[1]).toContain('Binary files');
    expect(stanzas[2]).toContain('rename to new name.txt');
  });

  it('leaves the last stanza out when the output was cut', () => {
    const patch = 'diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/y b/y\n@@ -1 +1 @@\n-a';
    const buf = Buffer.from(`1\t1\tx\x001\t1\ty\x00\x00${patch}`, 'latin1');
    const parsed = parseDiffOutput(buf, true);
    expect(parsed.entries[0]!.stanza).not.toBeNull();
    expect(parsed.entries[1]!.stanza).toBeNull();
    expect(findStanzaStarts(parsed.patch)).toHaveLength(2);
  });
});

describe('newFileStanza', () => {
  it('prints exactly what git prints for the same file added with intent-to-add', () => {
    const cases: [string, Buffer][] = [
      ['plain.txt', Buffer.from('one\ntwo\n')],
      ['no newline.txt', Buffer.from('one\ntwo')],
      ['crlf.txt', Buffer.from('a\r\nb\r\n')],
      ['empty', Buffer.alloc(0)],
      ['tab\there', Buffer.from('x\n')],
      ['ünï.txt', Buffer.from('ü\n')],
      ['one line', Buffer.from('single\n')],
    ];
    const repo = createTempRepo({ files: { keep: 'k\n' } });
    onTestFinished(() => repo.cleanup());
    for (const [name, content] of cases) repo.write(name, content);
    for (const [name, content] of cases) {
      repo.git('add', '-N', '--', name);
      const expected = repo.git('-c', 'core.quotePath=false', 'diff', '--full-index', '--', name);
      const mine = newFileStanza({
        path: keyFromText(name),
        mode: '100644',
        oid: blobOid(content),
        content,
        binary: false,
      });
      expect(mine.toString('utf8')).toBe(expected);
    }
  });

  it('counts lines like numstat and writes a binary stanza without content', () => {
    expect([
      countLines(Buffer.from('')),
      countLines(Buffer.from('a')),
      countLines(Buffer.from('a\n')),
      countLines(Buffer.from('a\nb')),
    ]).toEqual([0, 1, 1, 2]);
    const s = newFileStanza({
      path: 'b.bin',
      mode: '100644',
      oid: 'f'.repeat(40),
      content: Buffer.from([0]),
      binary: true,
    }).toString();
    expect(s).toBe(
      `diff --git a/b.bin b/b.bin\nnew file mode 100644\nindex ${'0'.repeat(40)}..${'f'.repeat(40)}\nBinary files /dev/null and b/b.bin differ\n`,
    );
  });
});

describe('cutPage', () => {
  const stanza = (name: string, hunks: number) =>
    `diff --git a/${name} b/${name}\n--- a/${name}\n+++ b/${name}\n` +
    Array.from({ length: hunks }, (_, i) => `@@ -${i} +${i} @@\n-old${i}\n+new${i}\n`).join('');
  const text = Buffer.from(stanza('a', 2) + stanza('b', 3));
  const starts = findStanzaStarts(text);

  it('returns everything when it fits, and pages concatenate to the whole text on file and hunk boundaries', () => {
    expect(cutPage(text, starts, 0, text.length)).toEqual({ start: 0, end: text.length, next: null });
    let offset = 0;
    const pages: string[] = [];
    while (true) {
      const cut = cutPage(text, starts, offset, 60);
      const page = text.subarray(cut.start, cut.end).toString();
      expect(page.length).toBeLessThanOrEqual(60);
      if (cut.next !== null) expect(text.subarray(cut.end).toString()).toMatch(/^(diff --git|@@ )/);
      pages.push(page);
      if (cut.next === null) break;
      offset = cut.next;
    }
    expect(pages.join('')).toBe(text.toString());
  });

  it('cuts a hunk longer than the budget after a whole line, and a longer line on a UTF-8 boundary', () => {
    const long = Buffer.from('diff --git a/x b/x\n@@ -1 +1 @@\n+' + 'é'.repeat(50) + '\n');
    const s = findStanzaStarts(long);
    const first = cutPage(long, s, 0, 40);
    expect(long.subarray(0, first.end).toString()).toBe('diff --git a/x b/x\n'); // the hunk start is the last boundary
    const second = cutPage(long, s, first.end, 40);
    expect(long.subarray(second.start, second.end).toString()).toBe('@@ -1 +1 @@\n'); // the last whole line
    const third = cutPage(long, s, second.end, 12);
    expect(third.end - third.start).toBe(11); // 12 would split a 2-byte character
    expect(long.subarray(third.start, third.end).toString()).toBe('+' + 'é'.repeat(5));
  });

  it('refuses an offset past the end or inside a character', () => {
    expect(() => cutPage(text, starts, text.length + 1, 10)).toThrow(/not a page start/);
    const u = Buffer.from('diff --git a/x b/x\n+é\n');
    expect(() => cutPage(u, [0], u.indexOf(0xa9), 10)).toThrow(/not a page start/);
  });
});
