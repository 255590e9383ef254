import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { AppError } from '../errors.ts';
import {
  createTempDir,
  createTempRepo,
  gitFingerprint,
  plantHostileConfig,
  type TempRepo,
} from '../test-support/index.ts';
import { displayPath, keyFromBytes, keyFromText } from '../paths/index.ts';
import {
  checkAttrs,
  filterOverrides,
  findRepo,
  listIgnored,
  listIndex,
  listUntracked,
  readBlobs,
  readHead,
  runGit,
  scrubbedGitEnv,
} from './index.ts';

const repos: TempRepo[] = [];
const track = (r: TempRepo) => (repos.push(r), r);
afterEach(() => {
  while (repos.length) repos.pop()!.cleanup();
});

const ODD_NAMES = [
  'with space.txt',
  'quote"d.txt',
  "single'q.txt",
  'tab\there.txt',
  'new\nline.txt',
  'ünïcødé-日本.txt',
  '-leading-dash.txt',
  'a -> b.txt',
  'back\\slash.txt',
];

describe('hardened git runner', () => {
  it('B27: the environment is scrubbed of inherited GIT_* and pinned to C locale without prompts or locks', () => {
    const saved = { ...process.env };
    process.env.GIT_DIR = '/nonexistent';
    process.env.GIT_INDEX_FILE = '/nonexistent/index';
    process.env.GIT_WORK_TREE = '/nonexistent';
    try {
      const env = scrubbedGitEnv();
      expect(env.GIT_DIR).toBeUndefined();
      expect(env.GIT_INDEX_FILE).toBeUndefined();
      expect(env.GIT_WORK_TREE).toBeUndefined();
      expect(env).toMatchObject({
        LC_ALL: 'C',
        GIT_TERMINAL_PROMPT: '0',
        GIT_OPTIONAL_LOCKS: '0',
        GIT_CONFIG_NOSYSTEM: '1',
      });
    } finally {
      process.env = saved;
    }
  });

  it('B27: an inherited GIT_DIR / GIT_INDEX_FILE does not redirect queries to another repository', async () => {
    const a = track(createTempRepo({ files: { 'a.txt': 'a\n' } }));
    const b = track(createTempRepo({ files: { 'b.txt': 'b\n' } }));
    const saved = { ...process.env };
    process.env.GIT_DIR = path.join(b.dir, '.git');
    process.env.GIT_INDEX_FILE = path.join(b.dir, '.git', 'index');
    try {
      const entries = await listIndex(a.dir);
      expect(entries.map((e) => e.path)).toEqual(['a.txt']);
    } finally {
      process.env = saved;
    }
  });

  it('B18: a hung git is killed at the deadline with git_timeout', async () => {
    const repo = track(createTempRepo({ files: { 'a.txt': 'a\n' } }));
    const fifo = path.join(repo.dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    // Reading a FIFO nobody writes to blocks forever: a real hung git, so an answer at all means it was killed.
    const err = await runGit({ cwd: repo.dir, args: ['hash-object', '--', 'pipe'], timeoutMs: 300 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('git_timeout');
  });

  it('a missing git binary is git_missing, a missing folder not_found, a failing command git_failed with exit code and stderr', async () => {
    const dir = createTempDir();
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    const missing = await runGit({ cwd: dir, args: ['status'], gitBinary: path.join(dir, 'no-such-git') }).catch(
      (e: unknown) => e,
    );
    expect((missing as AppError).code).toBe('git_missing');
    const gone = await runGit({ cwd: path.join(dir, 'gone'), args: ['status'] }).catch((e: unknown) => e);
    expect((gone as AppError).code).toBe('not_found');
    const notRepo = await runGit({ cwd: dir, args: ['log'] }).catch((e: unknown) => e);
    expect((notRepo as AppError).code).toBe('not_a_repository');
    const repo = track(createTempRepo({ files: { 'a.txt': 'a\n' } }));
    const failed = await runGit({ cwd: repo.dir, args: ['cat-file', '-p', 'deadbeef'] }).catch((e: unknown) => e);
    expect((failed as AppError).code).toBe('git_failed');
    expect((failed as AppError).details).toMatchObject({ exit_code: 128 });
    expect(String((failed as AppError).details?.stderr)).toMatch(/deadbeef|Not a valid object/i);
  });

  it('B26: listing, attributes, HEAD, blob reads and filter discovery run nothing planted and write nothing in .git', async () => {
    const repo = track(
      createTempRepo({ files: { 'a.txt': 'one\n', 'sub/b.txt': 'two\n', '.gitignore': 'ignored/\n' } }),
    );
    repo.write('a.txt', 'dirty\n');
    repo.write('untracked.txt', 'u\n');
    repo.write('ignored/x.txt', 'x\n');
    const { markerExists } = plantHostileConfig(repo);
    const before = gitFingerprint(path.join(repo.dir, '.git'));
    // Make every index entry racy so a careless status would re-hash (and filter) the files.
    const now = new Date();
    fs.utimesSync(path.join(repo.dir, 'sub/b.txt'), now, now);

    const info = await findRepo(repo.dir);
    const index = await listIndex(repo.dir);
    const untracked = await listUntracked(repo.dir);
    const ignored = await listIgnored(repo.dir);
    const attrs = await checkAttrs(
      repo.dir,
      index.map((e) => e.path),
      ['binary', 'diff', 'filter'],
    );
    const head = await readHead(repo.dir);
    const blobs = await readBlobs(
      repo.dir,
      index.map((e) => e.oid),
    );
    const filters = await filterOverrides(repo.dir);

    expect(info?.topLevel).toBe(repo.dir);
    expect(index.map((e) => e.path).sort()).toEqual(['.gitignore', 'a.txt', 'sub/b.txt']);
    expect(untracked).toEqual(['untracked.txt']);
    expect(ignored.dirs).toEqual(['ignored']);
    expect(attrs.get('a.txt')).toMatchObject({ filter: 'evil', diff: 'evil' });
    expect(head.branch).toBe('main');
    expect(blobs.get(index.find((e) => e.path === 'a.txt')!.oid)?.toString()).toBe('one\n');
    expect(filters.drivers).toEqual(['evil']);
    expect(filters.config).toContainEqual(['filter.evil.clean', '']);

    expect(markerExists()).toBe(false);
    expect(gitFingerprint(path.join(repo.dir, '.git'))).toBe(before);
  });

  it('B26: with the filter overrides, even `git status` and `git diff` run no planted filter, fsmonitor, pager or textconv', async () => {
    const repo = track(createTempRepo({ files: { 'a.txt': 'one\n' } }));
    repo.write('a.txt', 'two\n');
    const { markerExists } = plantHostileConfig(repo);
    const { config } = await filterOverrides(repo.dir);
    await runGit({ cwd: repo.dir, args: ['status', '--porcelain=v2', '-z'], config });
    const diff = await runGit({ cwd: repo.dir, args: ['diff', '--no-ext-diff', '--no-textconv'], config });
    expect(diff.stdout.toString()).toContain('+two');
    expect(markerExists()).toBe(false);
  });
});

describe('repository queries', () => {
  it('B13: odd file names round-trip byte for byte through the -z parsers', async () => {
    const files: Record<string, string> = {};
    for (const n of ODD_NAMES) files[`d/${n}`] = `${n}\n`;
    const repo = track(createTempRepo({ files }));
    for (const n of ODD_NAMES) repo.write(`u/${n}`, 'new\n');
    const tracked = (await listIndex(repo.dir)).map((e) => e.path).sort();
    const untracked = (await listUntracked(repo.dir)).sort();
    expect(tracked).toEqual(ODD_NAMES.map((n) => keyFromText(`d/${n}`)).sort());
    expect(untracked).toEqual(ODD_NAMES.map((n) => keyFromText(`u/${n}`)).sort());
    expect(tracked.map((k) => displayPath(k).path).sort()).toEqual(ODD_NAMES.map((n) => `d/${n}`).sort());
    const attrs = await checkAttrs(repo.dir, tracked, ['binary']);
    expect(attrs.size).toBe(ODD_NAMES.length);
  });

  it('B13: a name that is not valid UTF-8 is listed without a crash and shown with its base64 bytes', async () => {
    const repo = track(createTempRepo({ files: { 'a.txt': 'a\n' } }));
    const raw = Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0x2e, 0x74, 0x78, 0x74]);
    fs.writeFileSync(Buffer.concat([Buffer.from(repo.dir + '/'), raw]), 'x\n');
    const untracked = await listUntracked(repo.dir);
    expect(untracked).toEqual([keyFromBytes(raw)]);
    const shown = displayPath(untracked[0]!);
    expect(shown.base64).toBe(raw.toString('base64'));
    expect(shown.path).toContain('bad');
  });

  it('index entries carry the stat data git recorded (size, mtime, blob id, mode)', async () => {
    const repo = track(createTempRepo({ files: { 'a.txt': 'hello\n' } }));
    repo.write('run.sh', '#!/bin/sh\n', 0o755);
    fs.symlinkSync('a.txt', path.join(repo.dir, 'link'));
    repo.commit('more');
    const entries = await listIndex(repo.dir);
    const a = entries.find((e) => e.path === 'a.txt')!;
    const st = fs.statSync(path.join(repo.dir, 'a.txt'));
    expect(a.size).toBe(6);
    expect(a.mtimeMs).toBe(Math.floor(st.mtimeMs));
    expect(a.oid).toBe(repo.git('rev-parse', 'HEAD:a.txt').trim());
    expect(entries.find((e) => e.path === 'run.sh')!.mode).toBe('100755');
    expect(entries.find((e) => e.path === 'link')!.mode).toBe('120000');
  });

  it('an empty repository (no commits) is unborn; a detached HEAD is detached', async () => {
    const empty = track(createTempRepo());
    expect(await readHead(empty.dir)).toEqual({ head: null, branch: 'main', detached: false, unborn: true });
    expect(await listIndex(empty.dir)).toEqual([]);
    const repo = track(createTempRepo({ files: { 'a.txt': 'a\n' } }));
    const sha = repo.git('rev-parse', 'HEAD').trim();
    repo.git('checkout', '-q', '--detach');
    expect(await readHead(repo.dir)).toEqual({ head: sha, branch: null, detached: true, unborn: false });
  });

  it('B16: a subfolder lists only its own files, relative to itself; a linked worktree has its own git dir', async () => {
    const repo = track(createTempRepo({ files: { 'top.txt': 't\n', 'pkg/a.txt': 'a\n', 'pkg/deep/b.txt': 'b\n' } }));
    repo.write('pkg/new.txt', 'n\n');
    repo.write('other.txt', 'o\n');
    const sub = path.join(repo.dir, 'pkg');
    const info = await findRepo(sub);
    expect(info).toMatchObject({ topLevel: repo.dir, prefix: 'pkg' });
    expect((await listIndex(sub)).map((e) => e.path).sort()).toEqual(['a.txt', 'deep/b.txt']);
    expect(await listUntracked(sub)).toEqual(['new.txt']);

    const wt = path.join(createTempDir(), 'wt');
    repo.git('worktree', 'add', '-q', '-b', 'side', wt);
    const wtInfo = await findRepo(wt);
    expect(wtInfo?.topLevel).toBe(fs.realpathSync(wt));
    expect(wtInfo?.gitDir).not.toBe(wtInfo?.commonDir);
    expect(wtInfo?.commonDir).toBe(path.join(repo.dir, '.git'));
    expect((await listIndex(wt)).length).toBe(3);
    expect((await readHead(wt)).branch).toBe('side');
  });

  it('B16: a nested repository shows up as one untracked folder entry, never as its files', async () => {
    const repo = track(createTempRepo({ files: { 'a.txt': 'a\n' } }));
    fs.mkdirSync(path.join(repo.dir, 'nested'));
    execFileSync('git', ['init', '-q'], { cwd: path.join(repo.dir, 'nested') });
    repo.write('nested/inner.txt', 'i\n');
    const untracked = await listUntracked(repo.dir);
    expect(untracked).toEqual(['nested/']);
    expect(await findRepo(repo.dir + '/nested')).toMatchObject({ topLevel: path.join(repo.dir, 'nested') });
  });

  it('a folder outside any repository is not a repository', async () => {
    const dir = createTempDir();
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    expect(await findRepo(dir)).toBeNull();
  });
});

describe('patch commands', () => {
  it('B26: diff, log -p and show never run a planted external diff or textconv, even when the caller forgets the flags', async () => {
    const repo = track(createTempRepo({ files: { 'a.txt': 'one\n' } }));
    repo.write('a.txt', 'two\n');
    repo.commit('second');
    repo.write('a.txt', 'three\n');
    const { markerExists } = plantHostileConfig(repo);
    const { config } = await filterOverrides(repo.dir);
    const diff = await runGit({ cwd: repo.dir, args: ['diff'], config });
    const log = await runGit({ cwd: repo.dir, args: ['log', '-p', '-1'], config });
    const show = await runGit({ cwd: repo.dir, args: ['show', 'HEAD'], config });
    expect(diff.stdout.toString()).toContain('+three');
    expect(log.stdout.toString()).toContain('+two');
    expect(show.stdout.toString()).toContain('+two');
    expect(markerExists()).toBe(false);
  });
});
