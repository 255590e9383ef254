import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { DEFAULT_LIMITS } from '../../config.ts';
import { createTempDir, createTempRepo } from '../../test-support/temp-repo.ts';
import { rows, runChange, testEngine } from '../../test-support/engine-harness.ts';
import { createEngine } from '../registry.ts';
import { createIndexCache } from './repository.ts';
import { changedEntries, cleanEntry, parseIndexFile, UnreadableIndexError } from './index-snapshot.ts';
import { parseStatusV2 } from './status-listing.ts';

const engine = testEngine();
afterAll(() => engine.close());

describe('git status as the stat source', () => {
  test('a git workspace is listed by git, not walked: a walk that would be cut at its first folder is never used', async () => {
    const tree = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`d${i}/f.txt`, `${i}\n`]));
    const repo = createTempRepo({ files: tree });
    onTestFinished(() => repo.cleanup());
    // The walk's clock steps 600 ms per folder read: with a 1 s deadline a walk stops after the root.
    const slowWalk = (walkOnly: boolean) =>
      createEngine({
        limits: Object.freeze({ ...DEFAULT_LIMITS, scanTimeoutMs: 1_000 }),
        dbPath: null,
        scanner: { walkClockStepMs: 600 },
        walkOnly,
      });
    const listed = slowWalk(false);
    const walked = slowWalk(true);
    onTestFinished(() => Promise.all([listed.close(), walked.close()]).then(() => undefined));
    const viaGit = await runChange(listed, repo.dir, () => repo.write('d49/f.txt', 'changed\n'));
    expect(viaGit.start).toMatchObject({ truncated: false, scanned_files: 50 });
    expect(rows(viaGit.delta)).toEqual(['M d49/f.txt +1 -1']);
    // Control: the same engine walking is cut by the deadline and cannot see the change.
    const viaWalk = await runChange(walked, repo.dir, () => repo.write('d49/f.txt', 'again\n'));
    expect(viaWalk.start.truncated_reasons).toContain('scan_time');
    expect(rows(viaWalk.delta)).toEqual([]);
  });

  test('a submodule a clone did not check out is a folder to skip: no degraded run, every change exact', async () => {
    const sub = createTempRepo({ files: { 'lib.txt': 'lib\n' } });
    onTestFinished(() => sub.cleanup());
    const upstream = createTempRepo({ files: { 'a.txt': 'a\n' } });
    onTestFinished(() => upstream.cleanup());
    upstream.git('-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub.dir, 'libs/sub');
    upstream.commit('add the submodule');
    const parent = createTempDir('rundiff-clone-');
    onTestFinished(() => fs.rmSync(parent, { recursive: true, force: true }));
    const dir = path.join(parent, 'clone');
    upstream.git('clone', '-q', upstream.dir, dir);
    // Positive control: the clone has the submodule's folder, empty, as a normal clone leaves it.
    expect(fs.readdirSync(path.join(dir, 'libs/sub'))).toEqual([]);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'untracked at the start\n');
    const { start, delta } = await runChange(engine, dir, () => {
      fs.writeFileSync(path.join(dir, 'a.txt'), 'a changed\n');
      fs.writeFileSync(path.join(dir, 'notes.txt'), 'untracked, then edited\n');
    });
    expect(start).toMatchObject({ truncated: false, truncated_reasons: [] });
    expect(delta).toMatchObject({ truncated: false, truncated_reasons: [] });
    expect(rows(delta)).toEqual(['M a.txt +1 -1', 'M notes.txt +1 -1']);
  });

  test('deleting a .gitignore does not report the files it ignored: they existed unchanged at both ends', async () => {
    const repo = createTempRepo({ files: { '.gitignore': 'secret.env\n*.log\n', 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    repo.write('secret.env', 'TOKEN=1\n');
    repo.write('app.log', 'started\n');
    // Positive control: git ignores both at the start, so git status does not name them.
    expect(repo.git('status', '--porcelain')).toBe('');
    const { delta } = await runChange(engine, repo.dir, () => {
      fs.rmSync(path.join(repo.dir, '.gitignore'));
      repo.write('app.log', 'started\nstopped\n');
    });
    // The one ignored file the run wrote is a change against its start bytes; the other is none.
    expect(rows(delta)).toEqual(['D .gitignore +0 -2', 'M app.log +1 -0']);
    expect(delta.truncated_reasons).toEqual([]);
    // Control: git now lists both as untracked; only their ignore rule went.
    expect(repo.git('status', '--porcelain', '--untracked-files=all')).toContain('?? secret.env');
  });

  test('edits to assume-unchanged and skip-worktree files are found, although git status does not show them', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' } });
    onTestFinished(() => repo.cleanup());
    repo.git('update-index', '--assume-unchanged', 'a.txt');
    repo.git('update-index', '--skip-worktree', 'b.txt');
    const { delta } = await runChange(engine, repo.dir, () => {
      repo.write('a.txt', 'a changed\n');
      repo.write('b.txt', 'b changed\n');
    });
    expect(rows(delta)).toEqual(['M a.txt +1 -1', 'M b.txt +1 -1']);
    // Control: git itself looks away from both.
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  test('a planted core.worktree does not point the listing at another folder', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    const elsewhere = createTempDir('rundiff-elsewhere-');
    onTestFinished(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
    fs.writeFileSync(path.join(elsewhere, 'a.txt'), 'something else entirely\n');
    fs.writeFileSync(path.join(elsewhere, 'decoy.txt'), 'decoy\n');
    repo.git('config', 'core.worktree', elsewhere);
    const { delta } = await runChange(engine, repo.dir, () => repo.write('a.txt', 'a edited\n'));
    expect(rows(delta)).toEqual(['M a.txt +1 -1']);
    // Control: plain git run in the workspace lists the other folder.
    expect(repo.git('status', '--porcelain')).toContain('decoy.txt');
  });

  test('a filter driver planted after an earlier listing (directly or through an include) never runs', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n', 'b.txt': 'b\n' } });
    onTestFinished(() => repo.cleanup());
    const markerDir = createTempDir('rundiff-marker-');
    onTestFinished(() => fs.rmSync(markerDir, { recursive: true, force: true }));
    const marker = path.join(markerDir, 'ran');
    const script = path.join(markerDir, 'evil.sh');
    fs.writeFileSync(script, `#!/bin/sh\necho "$0" >> '${marker}'\ncat\n`, { mode: 0o755 });
    // The include names a file that does not exist yet: the first listing is cached without it.
    repo.git('config', 'include.path', 'later.cfg');
    await runChange(engine, repo.dir, () => repo.write('a.txt', 'a1\n'));
    fs.writeFileSync(path.join(repo.dir, '.git/later.cfg'), `[filter "inc"]\n\tclean = ${script}\n`);
    repo.write('.gitattributes', '*.txt filter=inc\n');
    const viaInclude = await runChange(engine, repo.dir, () => repo.write('b.txt', 'b changed\n'));
    expect(rows(viaInclude.delta)).toContain('M b.txt +1 -1');
    repo.git('config', 'filter.direct.clean', script);
    repo.write('.gitattributes', '*.txt filter=direct\n');
    const direct = await runChange(engine, repo.dir, () => repo.write('a.txt', 'a2 changed\n'));
    expect(rows(direct.delta)).toContain('M a.txt +1 -1');
    expect(fs.existsSync(marker)).toBe(false);
    // Control: plain git runs the planted filter.
    repo.write('a.txt', 'a3 control\n');
    repo.git('add', 'a.txt');
    expect(fs.existsSync(marker)).toBe(true);
  });

  test('attributes apply from a tracked .gitattributes, an untracked one, and .git/info/attributes alone', async () => {
    const cases: [string, (repo: ReturnType<typeof createTempRepo>) => void][] = [
      ['tracked', (r) => (r.write('.gitattributes', '*.dat binary\n'), r.commit('attrs'))],
      ['untracked', (r) => r.write('sub/.gitattributes', '*.dat binary\n')],
      ['info', (r) => fs.writeFileSync(path.join(r.dir, '.git/info/attributes'), '*.dat binary\n')],
    ];
    for (const [, plant] of cases) {
      const repo = createTempRepo({ files: { 'sub/x.dat': 'text\n' } });
      onTestFinished(() => repo.cleanup());
      plant(repo);
      const { delta } = await runChange(engine, repo.dir, () => repo.write('sub/x.dat', 'more text\n'));
      expect(rows(delta)).toEqual(['M sub/x.dat +0 -0 binary (binary)']);
    }
    // Control: without any attributes the same edit is a text change.
    const plain = createTempRepo({ files: { 'sub/x.dat': 'text\n' } });
    onTestFinished(() => plain.cleanup());
    const { delta } = await runChange(engine, plain.dir, () => plain.write('sub/x.dat', 'more text\n'));
    expect(rows(delta)).toEqual(['M sub/x.dat +1 -1']);
  });

  test('git listing over its deadline: the checkpoint says git_timeout at once (no walk) and the completion claims nothing', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    // git status reads the repository's exclude file: a FIFO there holds it until it is killed.
    const { execFileSync } = await import('node:child_process');
    fs.rmSync(path.join(repo.dir, '.git/info/exclude'), { force: true });
    execFileSync('mkfifo', [path.join(repo.dir, '.git/info/exclude')]);
    const logged: string[] = [];
    const e = createEngine({
      limits: DEFAULT_LIMITS,
      dbPath: null,
      listingTimeoutMs: 1_000,
      log: (m) => logged.push(m),
    });
    onTestFinished(() => e.close());
    const { start, delta } = await runChange(e, repo.dir, () => repo.write('a.txt', 'b\n'));
    expect(start).toMatchObject({ scanned_files: 0, truncated: true, truncated_reasons: ['git_timeout'] });
    expect(delta.truncated_reasons).toContain('git_timeout');
    expect(rows(delta)).toEqual([]);
    expect(logged.join('\n')).toMatch(/not walked: the checkpoint says git_timeout/);
  });

  test('an index only git can read (split index) falls back to the walk, with the same answer', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n', 'b.txt': 'b\n' } });
    onTestFinished(() => repo.cleanup());
    repo.git('update-index', '--split-index');
    const logged: string[] = [];
    const e = createEngine({ limits: DEFAULT_LIMITS, dbPath: null, log: (m) => logged.push(m) });
    onTestFinished(() => e.close());
    const { start, delta } = await runChange(e, repo.dir, () => {
      repo.write('a.txt', 'a2\n');
      repo.write('new.txt', 'n\n');
    });
    expect(start.truncated).toBe(false);
    expect(rows(delta)).toEqual(['M a.txt +1 -1', 'A new.txt +1 -0']);
    expect(logged.join('\n')).toMatch(/walking instead.*index extension link/);
  });

  test('index versions 3 and 4 are read like version 2', async () => {
    for (const version of ['3', '4']) {
      const repo = createTempRepo({ files: { 'src/a.txt': 'a\n', 'src/b.txt': 'b\n', 'z.txt': 'z\n' } });
      onTestFinished(() => repo.cleanup());
      repo.git('update-index', '--index-version', version);
      const { delta } = await runChange(engine, repo.dir, () => {
        repo.write('src/b.txt', 'b2\n');
        repo.rm('z.txt');
      });
      expect(rows(delta)).toEqual(['M src/b.txt +1 -1', 'D z.txt +0 -1']);
    }
  });

  test('a path too long for the length the index keeps in its flags (4,095 bytes and more) is read whole, in every version', async () => {
    for (const version of ['2', '3', '4']) {
      const repo = createTempRepo({ files: { 'a.txt': 'a\n', 'z.txt': 'z\n' } });
      onTestFinished(() => repo.cleanup());
      const oid = repo.git('hash-object', '-w', 'a.txt').trim();
      // Only an index entry: no file system takes a path this long.
      const long = Array.from({ length: 20 }, (_, i) => `${i}`.padStart(220, 'd')).join('/') + '/f.txt';
      expect(long.length).toBeGreaterThan(4095);
      repo.git('update-index', '--add', '--cacheinfo', `100644,${oid},${long}`);
      repo.git('update-index', '--index-version', version);
      const ix = parseIndexFile(fs.readFileSync(path.join(repo.dir, '.git', 'index')), '');
      expect(ix.count).toBe(3);
      expect(cleanEntry(ix, long)).toMatchObject({ oid, mode: '100644' });
      expect(cleanEntry(ix, 'z.txt')).not.toBeNull();
    }
  });

  test('a repository cloned into the workspace during the run is reported file by file; one removed, as deleted files without content', async () => {
    const repo = createTempRepo({ files: { 'top.txt': 't\n' } });
    onTestFinished(() => repo.cleanup());
    const source = createTempRepo({ files: { 'x.txt': 'x\n', 'lib/y.txt': 'y\n' } });
    onTestFinished(() => source.cleanup());
    const added = await runChange(engine, repo.dir, () => {
      repo.git('clone', '-q', source.dir, path.join(repo.dir, 'vendor/dep'));
    });
    expect(rows(added.delta)).toEqual(['A vendor/dep/lib/y.txt +1 -0', 'A vendor/dep/x.txt +1 -0']);
    const removed = await runChange(engine, repo.dir, () => {
      fs.rmSync(path.join(repo.dir, 'vendor'), { recursive: true, force: true });
    });
    // Its objects went with it: the rows say the start content is unavailable rather than guess counts.
    expect(rows(removed.delta)).toEqual([
      'D vendor/dep/lib/y.txt +0 -0 (no_snapshot)',
      'D vendor/dep/x.txt +0 -0 (no_snapshot)',
    ]);
  });
});

describe('large repositories on default settings', () => {
  test(
    '21,000 tracked files and an ignored node_modules (over the old 20,000-file default) are tracked completely: no file-count cut',
    { tags: ['stress'], timeout: 120_000 },
    async () => {
      // Default limits but the time bound: on a loaded test machine git's deadline could trip, which is
      // a stated outcome of its own (bounds.test.ts), not what this test is about.
      const big = testEngine({ scanTimeoutMs: 30_000 });
      onTestFinished(() => big.close());
      const repo = createTempRepo({ files: { '.gitignore': 'node_modules/\n' }, commit: false });
      onTestFinished(() => repo.cleanup());
      // 21,000 loose objects would start git's automatic gc in the background, still writing to .git
      // while the folder is removed.
      repo.git('config', 'gc.auto', '0');
      for (let d = 0; d < 210; d++) {
        const dir = path.join(repo.dir, `pkg${d}`, 'src');
        fs.mkdirSync(dir, { recursive: true });
        for (let f = 0; f < 100; f++)
          fs.writeFileSync(path.join(dir, `f${f}.ts`), `export const v = ${d * 100 + f};\n`);
      }
      const deps = path.join(repo.dir, 'node_modules', 'dep');
      fs.mkdirSync(deps, { recursive: true });
      for (let f = 0; f < 1_000; f++) fs.writeFileSync(path.join(deps, `m${f}.js`), 'module.exports = 1;\n');
      repo.commit('21,000 files');
      const { start, delta } = await runChange(big, repo.dir, () => {
        repo.write('pkg0/src/f0.ts', 'export const v = -1;\n');
        repo.write('pkg209/src/f99.ts', 'export const v = -2;\n');
        repo.rm('pkg150/src/f50.ts');
        repo.write('pkg150/src/new.ts', 'export const n = 1;\n');
        repo.write('node_modules/dep/m0.js', 'changed but ignored\n');
      });
      expect(start).toMatchObject({ truncated: false, truncated_reasons: [] });
      expect(start.scanned_files).toBe(21_001);
      expect(delta.truncated).toBe(false);
      expect(rows(delta)).toEqual([
        'M pkg0/src/f0.ts +1 -1',
        'D pkg150/src/f50.ts +0 -1',
        'A pkg150/src/new.ts +1 -0',
        'M pkg209/src/f99.ts +1 -1',
      ]);
    },
  );
});

describe('index file and status parsing', () => {
  test('the cache of parsed indexes stays within its byte bound, oldest first, and keeps the newest even alone over it', () => {
    const repo = createTempRepo({
      files: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}.txt`, 'x\n'])),
    });
    onTestFinished(() => repo.cleanup());
    const ix = parseIndexFile(fs.readFileSync(path.join(repo.dir, '.git/index')), '');
    const cache = createIndexCache(ix.bytes * 2);
    cache.remember('a', '1', ix);
    cache.remember('b', '1', ix);
    expect(cache.heldBytes()).toBe(ix.bytes * 2);
    cache.remember('c', '1', ix);
    expect(cache.heldBytes()).toBe(ix.bytes * 2);
    expect(cache.get('a', '1')).toBeNull();
    expect(cache.get('c', '1')).toBe(ix);
    const tight = createIndexCache(1);
    tight.remember('a', '1', ix);
    tight.remember('b', '1', ix);
    expect(tight.get('a', '1')).toBeNull();
    expect(tight.get('b', '1')).toBe(ix);
  });

  test('entries below a folder are kept relative to it; the comparison finds what differs', () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n', 'sub/b.txt': 'b\n', 'sub/c.txt': 'c\n' } });
    onTestFinished(() => repo.cleanup());
    const first = parseIndexFile(fs.readFileSync(path.join(repo.dir, '.git/index')), 'sub/');
    expect(first.count).toBe(2);
    expect(cleanEntry(first, 'b.txt')).toMatchObject({ mode: '100644', stage: 0 });
    expect(cleanEntry(first, 'a.txt')).toBeNull();
    repo.write('sub/c.txt', 'c2\n');
    repo.write('sub/d.txt', 'd\n');
    repo.git('add', '-A');
    const second = parseIndexFile(fs.readFileSync(path.join(repo.dir, '.git/index')), 'sub/');
    expect(changedEntries(first, second)).toEqual(['c.txt', 'd.txt']);
    expect(changedEntries(second, first)).toEqual(['c.txt', 'd.txt']);
    expect(changedEntries(first, first)).toEqual([]);
  });

  test('a file that is not an index, or a cut one, is refused with a clear error', () => {
    expect(() => parseIndexFile(Buffer.from('hello world, not an index'), '')).toThrow(UnreadableIndexError);
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    const whole = fs.readFileSync(path.join(repo.dir, '.git/index'));
    expect(() => parseIndexFile(whole.subarray(0, 40), '')).toThrow(UnreadableIndexError);
  });

  test('status records: work-tree changes, untracked files, nested repositories and ignored entries; index-only changes are left to the index comparison', () => {
    const rec = (s: string) => Buffer.from(s + '\0', 'latin1');
    const oid = '0'.repeat(40);
    const out = Buffer.concat([
      rec(`1 .M N... 100644 100644 100644 ${oid} ${oid} top/a b.txt`),
      rec(`1 M. N... 100644 100644 100644 ${oid} ${oid} top/staged.txt`),
      rec(`u UU N... 100644 100644 100644 100644 ${oid} ${oid} ${oid} top/conflict.txt`),
      rec('? top/new file'),
      rec('? top/inner/'),
      rec('? elsewhere.txt'),
      rec('! top/secret.env'),
      rec('! top/node_modules/'),
      rec('! elsewhere.log'),
    ]);
    expect(parseStatusV2(out, 'top/')).toEqual({
      dirty: ['a b.txt', 'conflict.txt', 'new file'],
      nested: ['inner'],
      ignored: ['secret.env', 'node_modules/'],
    });
    expect(() => parseStatusV2(Buffer.from('1 .M N... 100644'), '')).toThrow();
  });
});
