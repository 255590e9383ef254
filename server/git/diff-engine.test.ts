import { execFileSync } from 'node:child_process';
import { isUtf8 } from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir, createTempRepo, type TempRepo } from '../test-support/temp-repo.ts';
import { gitQuotePath, keyFromBytes, keyFromText } from '../paths/index.ts';
import {
  attributePattern,
  createGitDiffEngine,
  gitBlobId,
  parseNumstatPatch,
  parseRawRenames,
  quoteForImport,
} from './diff-engine.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function repo(): TempRepo {
  const r = createTempRepo({ files: { '.keep': '' } });
  cleanups.push(() => r.cleanup());
  return r;
}

/** A private temp root for the engine, so a test can see that nothing is left behind. */
function engineRoot(): string {
  const dir = createTempDir('rundiff-engine-');
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('git diff engine: line diffs', () => {
  it('B9: batch counts and hunks are exactly git diff --numstat / -U3 for the same bytes', async () => {
    const pairs = [
      { before: 'one\ntwo\nthree\n', after: 'one\n2\nthree\nfour' },
      { before: 'a\r\nb\r\nc\r\n', after: 'a\nb\r\nc\r\nd\r\n' },
      { before: 'same\n', after: 'same\n' },
      // git's diff is not minimal here (a multi-match blank line in a rewritten block): +4 -8, not +3 -7.
      { before: 'line 10\n\nline 12\nline 13\nline 14\nline 15\nline 16\nline 17\n', after: '\n\n\n\n' },
      { before: '', after: 'x\n' },
    ].map((p) => ({ before: Buffer.from(p.before), after: Buffer.from(p.after) }));
    const root = engineRoot();
    const engine = createGitDiffEngine({ tmpDir: root });
    const got = await engine.batchDiff(pairs, 100);
    const r = repo();
    for (const [i, p] of pairs.entries()) {
      r.write('f', p.before);
      r.commit(`a${i}`);
      r.write('f', p.after);
      r.git('add', '-A');
      const numstat = r.git('diff', '--cached', '--numstat', '--', 'f').trim();
      const patch = r.git('diff', '--cached', '--', 'f');
      const res = got[i]!;
      expect(res).not.toBeNull();
      if (numstat === '') {
        expect(res).toEqual({ additions: 0, deletions: 0, hunks: Buffer.alloc(0) });
      } else {
        expect(`${res.additions}\t${res.deletions}\tf`).toBe(numstat);
        expect(res.hunks.toString('latin1')).toBe(patch.slice(patch.indexOf('\n@@') + 1));
      }
      r.git('reset', '-q', '--hard');
    }
    expect(fs.readdirSync(root)).toEqual([]);
  });

  // Its time against `git diff --no-index` is measured by `npm run bench -- diff`, not asserted here.
  it('B9: a 500 KiB all-lines-changed file gets exact counts with a 100 ms per-file budget', async () => {
    const lines = (500 * 1024) / 20;
    const before = Buffer.from(
      Array.from({ length: lines }, (_, i) => `before line ${String(i).padStart(6, '0')}\n`).join(''),
    );
    const after = Buffer.from(
      Array.from({ length: lines }, (_, i) => `after  line ${String(i).padStart(6, '0')}\n`).join(''),
    );
    const engine = createGitDiffEngine({ tmpDir: engineRoot() });
    await engine.batchDiff([{ before: Buffer.from('a\n'), after: Buffer.from('b\n') }], 100); // warm the page cache
    const [res] = await engine.batchDiff([{ before, after }], 100);
    expect(res).not.toBeNull();
    expect(res!.additions).toBe(lines);
    expect(res!.deletions).toBe(lines);
  });

  it('B18: a missing git binary gives null results (the caller falls back), never a throw', async () => {
    const root = engineRoot();
    const engine = createGitDiffEngine({ tmpDir: root, gitBinary: path.join(root, 'no-such-git') });
    const res = await engine.batchDiff([{ before: Buffer.from('a\n'), after: Buffer.from('b\n') }], 100);
    expect(res).toEqual([null]);
    expect(await engine.fallbackDiff(Buffer.from('a\n'), Buffer.from('b\n'), 100)).toBeNull();
  });

  it('parses no-index numstat + patch output; a pair git calls binary has no line diff', () => {
    const out = Buffer.from(
      '1\t0\t\0x/0\0y/0\0-\t-\t\0x/2\0y/2\0\0diff --git a/x/0 b/y/0\nindex 1..2 100644\n--- a/x/0\n+++ b/y/0\n@@ -1 +1,2 @@\n a\n+diff --git a/x/1 b/y/1\n',
      'latin1',
    );
    const res = parseNumstatPatch(out, 3);
    expect(res[0]).toEqual({
      additions: 1,
      deletions: 0,
      hunks: Buffer.from('@@ -1 +1,2 @@\n a\n+diff --git a/x/1 b/y/1\n'),
    });
    expect(res[1]).toEqual({ additions: 0, deletions: 0, hunks: Buffer.alloc(0) });
    expect(res[2]).toBeNull();
  });
});

describe('git diff engine: renames', () => {
  /** git's own pairing for the same deleted/added files, from a real commit pair. */
  function gitRenames(r: TempRepo, del: Record<string, string>, add: Record<string, string>) {
    for (const [p, c] of Object.entries(del)) r.write(p, c);
    const a = r.commit('a');
    for (const p of Object.keys(del)) r.rm(p);
    for (const [p, c] of Object.entries(add)) r.write(p, c);
    const b = r.commit('b');
    const raw = r.git('diff', '-M', '--raw', '-z', a, b);
    return parseRawRenames(Buffer.from(raw, 'latin1'));
  }
  const sides = (files: Record<string, string>) =>
    Object.entries(files).map(([p, c]) => ({ path: keyFromText(p), mode: '100644', bytes: Buffer.from(c) }));

  it('B8: exact, edited, below-50% and tied identical sources pair exactly as git diff -M', async () => {
    const body = (tag: string) => Array.from({ length: 20 }, (_, i) => `${tag} ${i}\n`).join('');
    const del = {
      'src/dup.txt': 'same\ncontent\n',
      'src/other/dup.txt': 'same\ncontent\n',
      'lib/a.txt': 'same\ncontent\n',
      'edited.txt': body('x'),
      'far.txt': body('far'),
      e1: '',
      e2: '',
    };
    const add = {
      'moved/dup.txt': 'same\ncontent\n',
      'zz.txt': 'same\ncontent\n',
      'renamed.txt': body('x').replace('x 3\n', 'changed\n'),
      'near.txt': body('far')
        .split('\n')
        .map((l, i) => (i < 12 ? `new ${i}` : l))
        .join('\n'),
      e3: '',
    };
    const expected = gitRenames(repo(), del, add);
    const engine = createGitDiffEngine({ tmpDir: engineRoot() });
    const got = await engine.renameDetector(sides(del), sides(add), 5_000);
    expect(got.degraded).toBeUndefined();
    expect(got.pairs).toEqual(expected);
    expect(expected.map((p) => p.similarity)).toContain(100);
    expect(expected.find((p) => p.to === 'renamed.txt')?.similarity).toBeLessThan(100);
    expect(expected.find((p) => p.to === 'near.txt')).toBeUndefined();
  });

  it('B8: sides without bytes still pair when their oids are identical, never by similarity', async () => {
    const engine = createGitDiffEngine({ tmpDir: engineRoot() });
    const res = await engine.renameDetector(
      [
        { path: 'old-a', mode: '100644', bytes: null, oid: 'f'.repeat(40) },
        { path: 'old-b', mode: '100644', bytes: null, oid: gitBlobId(Buffer.from('hello\n')) },
      ],
      [
        { path: 'new-a', mode: '100644', bytes: null, oid: 'f'.repeat(40) },
        { path: 'new-b', mode: '100644', bytes: Buffer.from('hello\n') },
        { path: 'new-c', mode: '100644', bytes: null },
      ],
      5_000,
    );
    expect(res.pairs).toEqual([
      { from: 'old-a', to: 'new-a', similarity: 100 },
      { from: 'old-b', to: 'new-b', similarity: 100 },
    ]);
  });

  it('B8: symlinks and gitlinks pair only with the same kind; a binary-attribute file is still offered', async () => {
    const engine = createGitDiffEngine({ tmpDir: engineRoot() });
    const sha = 'a'.repeat(40);
    const res = await engine.renameDetector(
      [
        { path: 'link', mode: '120000', bytes: Buffer.from('target') },
        { path: 'sub', mode: '160000', bytes: Buffer.from(`Subproject commit ${sha}\n`) },
        { path: 'data.bin', mode: '100644', bytes: Buffer.from('x'.repeat(200)), binaryAttr: true },
      ],
      [
        { path: 'file', mode: '100644', bytes: Buffer.from('target') },
        { path: 'sub2', mode: '160000', bytes: null, oid: sha },
        { path: 'moved.bin', mode: '100644', bytes: Buffer.from('x'.repeat(200)), binaryAttr: true },
      ],
      5_000,
    );
    expect(res.pairs).toEqual([
      { from: 'data.bin', to: 'moved.bin', similarity: 100 },
      { from: 'sub', to: 'sub2', similarity: 100 },
    ]);
  });

  it('B18: a failing or too slow git degrades the pairing with a reason', async () => {
    const root = engineRoot();
    const broken = createGitDiffEngine({ tmpDir: root, gitBinary: path.join(root, 'no-such-git') });
    const one = [{ path: 'a', mode: '100644', bytes: Buffer.from('a\n') }];
    const two = [{ path: 'b', mode: '100644', bytes: Buffer.from('a\n') }];
    expect(await broken.renameDetector(one, two, 5_000)).toEqual({ pairs: [], degraded: 'degraded' });
    // Too slow: 1 ms for work real git needs far longer for (2,000 files to import and pair), so the
    // answer cannot race the timer (two tiny files could finish inside 1 ms on an idle machine).
    const many = (prefix: string) =>
      Array.from({ length: 2_000 }, (_, i) => ({
        path: `${prefix}${i}`,
        mode: '100644',
        bytes: Buffer.from(`line ${i}\n`.repeat(50)),
      }));
    const slow = createGitDiffEngine({ tmpDir: root });
    expect(await slow.renameDetector(many('a'), many('b'), 1)).toEqual({ pairs: [], degraded: 'git_timeout' });
    // Control: the same work with time enough pairs every file.
    expect((await slow.renameDetector(many('a'), many('b'), 60_000)).pairs).toHaveLength(2_000);
    const capped = createGitDiffEngine({ tmpDir: root, maxRenameBytes: 1 });
    expect(await capped.renameDetector(one, two, 5_000)).toEqual({ pairs: [], degraded: 'degraded' });
    expect(fs.readdirSync(root)).toEqual([]);
  });
});

describe('path quoting', () => {
  it('B13: gitQuotePath quotes every odd name exactly as git writes it in a patch header', () => {
    const r = repo();
    const names: Buffer[] = [
      Buffer.from('plain name.txt'),
      Buffer.from('-leading-dash'),
      Buffer.from('tab\there'),
      Buffer.from('new\nline'),
      Buffer.from('quote"and\\back'),
      Buffer.from('bell\x07\x1b\x7f'),
      Buffer.from('ünïcødé/文件.txt'),
      Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0x2e, 0x74]), // not UTF-8
      Buffer.concat([Buffer.from('mixé'), Buffer.from([0xe9])]), // valid UTF-8 part + a stray byte
    ];
    fs.mkdirSync(path.join(r.dir, 'ünïcødé'));
    for (const name of names) fs.writeFileSync(Buffer.concat([Buffer.from(r.dir + '/'), name]), 'x\n');
    r.git('add', '-A');
    const headers = (quotePath: boolean) =>
      execFileSync('git', ['-c', `core.quotePath=${quotePath}`, 'diff', '--cached'], {
        cwd: r.dir,
        env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' },
      })
        .toString('latin1')
        .split('\n')
        .filter((l) => l.startsWith('diff --git '));
    const plain = headers(false);
    const quoted = headers(true);
    for (const name of names) {
      const key = keyFromBytes(name);
      const ours = gitQuotePath(keyFromText('a/') + key) + ' ' + gitQuotePath(keyFromText('b/') + key);
      const line = Buffer.from(`diff --git ${ours}`, 'utf8').toString('latin1');
      // git with core.quotePath=false leaves valid UTF-8 alone; a name that is not UTF-8 cannot be
      // text as is and is written as git's default (quotePath=true) writes it.
      expect(isUtf8(name) ? plain : quoted).toContain(line);
    }
  });

  it('quotes fast-import paths and attribute patterns so every byte matches only itself', () => {
    expect(quoteForImport(Buffer.from('a "b"\\\n\xff', 'latin1')).toString('latin1')).toBe('"a \\"b\\"\\\\\\012\\377"');
    expect(attributePattern(Buffer.from('dir/a b*[x]?.bin')).toString()).toBe('/dir/a?b\\*\\[x]\\?.bin');
  });
});
