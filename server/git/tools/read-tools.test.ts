import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { GitDiffOutput, GitStatusOutput } from '../../../shared/index.ts';
import { createTempDir, createTempRepo, type TempRepo } from '../../test-support/index.ts';
import { toolHarness } from '../../test-support/tool-harness.ts';

const repos: TempRepo[] = [];
const fresh = (files: Record<string, string | Buffer> = { 'a.txt': 'one\n' }, commit = true) => {
  const r = createTempRepo({ files, commit });
  repos.push(r);
  return r;
};
afterEach(() => {
  while (repos.length) repos.pop()!.cleanup();
});

/** Names agents meet: spaces, quotes, tab, newline, UTF-8, a leading dash, and the rename arrow. */
const ODD_NAMES = [
  'with space.txt',
  'quote"d\'.txt',
  'tab\there.txt',
  'new\nline.txt',
  'ünïcödé/文件.txt',
  '-leading-dash.txt',
  'a -> b.txt',
];

describe('git_status', () => {
  it('lists staged, unstaged, untracked; a partially staged file in both; branch and clean', async () => {
    const repo = fresh({ 'a.txt': 'one\n', 'b.txt': 'bee\n' });
    const h = toolHarness(repo);
    expect(await h.call<GitStatusOutput>('git_status')).toMatchObject({
      branch: 'main',
      clean: true,
      unborn: false,
      detached: false,
      in_progress: null,
    });
    repo.write('a.txt', 'one\ntwo\n');
    repo.git('add', 'a.txt');
    repo.write('a.txt', 'one\ntwo\nthree\n');
    repo.write('b.txt', 'changed\n');
    repo.write('new/deep/file.txt', 'n\n');
    const s = await h.call<GitStatusOutput>('git_status');
    expect(s).toMatchObject({
      clean: false,
      staged: ['a.txt'],
      unstaged: ['a.txt', 'b.txt'],
      untracked: ['new/deep/file.txt'],
      conflicted: [],
    });
    expect(s.files.find((f) => f.path === 'a.txt')).toEqual({
      path: 'a.txt',
      old_path: null,
      index: 'M',
      worktree: 'M',
    });
  });

  it('round-trips odd names, reports a rename under its new path, and gives base64 for a non-UTF-8 name', async () => {
    const repo = fresh({ 'old.txt': 'same\n' });
    for (const n of ODD_NAMES) repo.write(n, 'x\n');
    repo.git('mv', 'old.txt', 'renamed.txt');
    const latin1 = Buffer.from([0x6c, 0xe4, 0x74, 0x69, 0x6e, 0x2e, 0x74, 0x78, 0x74]); // "lätin.txt" in Latin-1
    fs.writeFileSync(Buffer.concat([Buffer.from(repo.dir + '/'), latin1]), 'l\n');
    const s = await toolHarness(repo).call<GitStatusOutput>('git_status');
    expect(s.untracked).toEqual(expect.arrayContaining(ODD_NAMES));
    expect(s.files.find((f) => f.path === 'renamed.txt')).toMatchObject({ old_path: 'old.txt', index: 'R' });
    const bad = s.files.find((f) => f.path_base64 !== undefined);
    expect(bad && Buffer.from(bad.path_base64!, 'base64')).toEqual(latin1);
  });

  it('puts conflicts only in conflicted and names a merge in progress', async () => {
    const repo = fresh({ 'f.txt': 'base\n' });
    repo.git('checkout', '-q', '-b', 'other');
    repo.write('f.txt', 'theirs\n');
    repo.commit('theirs');
    repo.git('checkout', '-q', 'main');
    repo.write('f.txt', 'ours\n');
    repo.commit('ours');
    try {
      repo.git('merge', 'other');
    } catch {
      /* the conflict is the point */
    }
    const s = await toolHarness(repo).call<GitStatusOutput>('git_status');
    expect(s).toMatchObject({ conflicted: ['f.txt'], staged: [], unstaged: [], in_progress: 'merge' });
  });

  it('names a rebase in progress', async () => {
    const repo = fresh({ 'f.txt': 'base\n' });
    repo.git('checkout', '-q', '-b', 'topic');
    repo.write('f.txt', 'topic\n');
    repo.commit('topic');
    repo.git('checkout', '-q', 'main');
    repo.write('f.txt', 'main\n');
    repo.commit('main');
    repo.git('checkout', '-q', 'topic');
    try {
      repo.git('rebase', 'main');
    } catch {
      /* stops on the conflict */
    }
    expect((await toolHarness(repo).call<GitStatusOutput>('git_status')).in_progress).toBe('rebase');
  });

  it('answers an empty repository (unborn branch) and a detached HEAD', async () => {
    const empty = fresh({}, false);
    empty.write('first.txt', 'hello\n');
    const s = await toolHarness(empty).call<GitStatusOutput>('git_status');
    expect(s).toMatchObject({ branch: 'main', unborn: true, detached: false, untracked: ['first.txt'] });
    const h = toolHarness(empty);
    expect(await h.call('git_log')).toEqual({ commits: [] });
    expect(await h.call('git_branch')).toEqual({ current: 'main', detached: false, branches: [] });
    const d = await h.call<GitDiffOutput>('git_diff');
    expect(d.files).toEqual([{ path: 'first.txt', old_path: null, additions: 1, deletions: 0, binary: false }]);

    const repo = fresh();
    repo.git('checkout', '-q', '--detach');
    expect(await toolHarness(repo).call<GitStatusOutput>('git_status')).toMatchObject({ branch: null, detached: true });
    expect(await toolHarness(repo).call('git_branch')).toMatchObject({ current: null, detached: true });
  });

  it('reports ahead/behind against the upstream, and answers inside a linked worktree', async () => {
    const upstream = fresh({ 'u.txt': '1\n' });
    const clone = createTempDir();
    onTestFinished(() => fs.rmSync(clone, { recursive: true, force: true }));
    fs.rmSync(clone, { recursive: true }); // git clone makes the folder itself
    upstream.git('clone', '-q', upstream.dir, clone);
    const local = createTempRepo({ git: false });
    repos.push(local);
    const cloneRepo = { ...local, dir: clone, git: (...a: string[]) => upstream.git('-C', clone, ...a) };
    fs.writeFileSync(path.join(clone, 'mine.txt'), 'm\n');
    cloneRepo.git('add', '.');
    cloneRepo.git('commit', '-q', '-m', 'mine');
    upstream.write('u.txt', '2\n');
    upstream.commit('theirs');
    cloneRepo.git('fetch', '-q');
    const s = await toolHarness(clone).call<GitStatusOutput>('git_status');
    expect(s).toMatchObject({ branch: 'main', upstream: 'origin/main', ahead: 1, behind: 1 });
    expect(await toolHarness(clone).call('git_branch')).toMatchObject({
      branches: [{ name: 'main', upstream: 'origin/main' }],
    });

    const wtParent = createTempDir();
    onTestFinished(() => fs.rmSync(wtParent, { recursive: true, force: true }));
    const wt = path.join(wtParent, 'wt');
    upstream.git('worktree', 'add', '-q', '-b', 'side', wt);
    fs.writeFileSync(path.join(wt, 'side.txt'), 's\n');
    const w = await toolHarness(wt).call<GitStatusOutput>('git_status');
    expect(w).toMatchObject({ branch: 'side', untracked: ['side.txt'] });
  });
});

describe('git_diff', () => {
  it('shows the work tree with untracked files as new files, odd names round-tripping, and staged separately', async () => {
    const repo = fresh({ 'a.txt': 'one\n' });
    for (const n of ODD_NAMES) repo.write(n, 'x\n');
    repo.write('a.txt', 'two\n');
    const h = toolHarness(repo);
    const d = await h.call<GitDiffOutput>('git_diff');
    expect(d.files.map((f) => f.path).sort()).toEqual(['a.txt', ...ODD_NAMES].sort());
    expect(d.files_changed).toBe(ODD_NAMES.length + 1);
    expect(d).toMatchObject({ truncated: false, omitted: [], next_offset: null });
    expect(d.diff).toContain('+++ "b/tab\\there.txt"');
    expect(d.diff).toContain('diff --git a/-leading-dash.txt b/-leading-dash.txt');
    for (const n of ODD_NAMES) {
      const one = await h.call<GitDiffOutput>('git_diff', { path: n });
      expect(one.files).toEqual([{ path: n, old_path: null, additions: 1, deletions: 0, binary: false }]);
    }
    expect((await h.call<GitDiffOutput>('git_diff', { staged: true })).files).toEqual([]);
    repo.git('add', 'a.txt');
    const staged = await h.call<GitDiffOutput>('git_diff', { staged: true });
    expect(staged.files).toEqual([{ path: 'a.txt', old_path: null, additions: 1, deletions: 1, binary: false }]);
  });

  it('leaves ignored files out and marks binary files', async () => {
    const repo = fresh({ '.gitignore': 'build/\n*.log\n' });
    repo.write('build/out.js', 'x');
    repo.write('debug.log', 'x');
    repo.write('image.bin', Buffer.from([1, 0, 2]));
    const d = await toolHarness(repo).call<GitDiffOutput>('git_diff');
    expect(d.files).toEqual([{ path: 'image.bin', old_path: null, additions: 0, deletions: 0, binary: true }]);
    expect(d.diff).toContain('Binary files /dev/null and b/image.bin differ');
  });

  it('pages a large diff by max_bytes: pages concatenate to the whole patch and the file list is always complete', async () => {
    const repo = fresh(Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`f${i}.txt`, 'line\n'.repeat(50)])));
    for (let i = 0; i < 6; i++) repo.write(`f${i}.txt`, 'LINE\n'.repeat(50));
    const h = toolHarness(repo);
    const whole = await h.call<GitDiffOutput>('git_diff', { max_bytes: 1024 * 1024 });
    let offset: number | null = 0;
    let text = '';
    let pages = 0;
    while (offset !== null) {
      const page: GitDiffOutput = await h.call<GitDiffOutput>('git_diff', { offset, max_bytes: 700 });
      expect(Buffer.byteLength(page.diff)).toBeLessThanOrEqual(700);
      expect(page.files).toHaveLength(6);
      expect(page.truncated).toBe(page.next_offset !== null);
      if (page.next_offset !== null) expect(page.omitted.length).toBeGreaterThan(0);
      text += page.diff;
      offset = page.next_offset;
      pages++;
    }
    expect(pages).toBeGreaterThan(3);
    expect(text).toBe(whole.diff);
    const first = await h.call<GitDiffOutput>('git_diff', { max_bytes: 700 });
    expect(first.omitted).toContainEqual({ path: 'f5.txt', reason: 'budget' });
  });

  it('compares with a ref, a range A..B, and refuses staged with a range', async () => {
    const repo = fresh({ 'a.txt': '1\n' });
    const first = repo.git('rev-parse', 'HEAD').trim();
    repo.write('a.txt', '2\n');
    const second = repo.commit('two');
    repo.write('a.txt', '3\n');
    const h = toolHarness(repo);
    const range = await h.call<GitDiffOutput>('git_diff', { spec: `${first}..${second}` });
    expect(range.diff).toContain('-1\n+2\n');
    const vsFirst = await h.call<GitDiffOutput>('git_diff', { spec: 'HEAD~1' });
    expect(vsFirst.diff).toContain('-1\n+3\n');
    expect((await h.fail('git_diff', { spec: 'HEAD~1..HEAD', staged: true })).code).toBe('invalid_input');
    expect((await h.fail('git_diff', { spec: 'no-such-branch' })).code).toBe('invalid_ref');
  });
});

describe('git_log, git_show, git_branch', () => {
  it('logs with NUL-separated fields (subjects with odd characters), limits, path filters and ranges', async () => {
    const repo = fresh({ 'a.txt': '1\n' });
    repo.write('b.txt', '1\n');
    repo.commit('second: "quotes" and \ttab');
    repo.write('a.txt', '2\n');
    repo.commit('third');
    const h = toolHarness(repo);
    const log = await h.call<{ commits: { subject: string; parents: string[] }[] }>('git_log');
    expect(log.commits.map((c) => c.subject)).toEqual(['third', 'second: "quotes" and \ttab', 'initial']);
    expect(log.commits[2]!.parents).toEqual([]);
    expect((await h.call<{ commits: unknown[] }>('git_log', { limit: 1 })).commits).toHaveLength(1);
    const onlyA = await h.call<{ commits: { subject: string }[] }>('git_log', { path: 'a.txt' });
    expect(onlyA.commits.map((c) => c.subject)).toEqual(['third', 'initial']);
    const range = await h.call<{ commits: { subject: string }[] }>('git_log', { range: 'HEAD~2..HEAD' });
    expect(range.commits.map((c) => c.subject)).toEqual(['third', 'second: "quotes" and \ttab']);
  });

  it('shows a commit with its body, files and patch; a root commit against the empty tree', async () => {
    const repo = fresh({ 'a.txt': '1\n' });
    repo.write('a.txt', '2\n');
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'Subject line', '-m', 'Body para\n\nsecond para');
    const h = toolHarness(repo);
    const show = await h.call<{
      commit: { subject: string; body: string };
      files: unknown[];
      diff: string;
      truncated: boolean;
    }>('git_show', { ref: 'HEAD' });
    expect(show.commit).toMatchObject({ subject: 'Subject line', body: 'Body para\n\nsecond para' });
    expect(show.files).toEqual([{ path: 'a.txt', old_path: null, additions: 1, deletions: 1, binary: false }]);
    expect(show.truncated).toBe(false);
    const root = await h.call<{ files: { path: string }[] }>('git_show', { ref: 'HEAD~1' });
    expect(root.files).toEqual([{ path: 'a.txt', old_path: null, additions: 1, deletions: 0, binary: false }]);
  });
});

describe('git_diff and the racy-clean rule', () => {
  it('B3: a same-size edit right after the commit is shown (the private index copy keeps git comparing content)', async () => {
    for (let i = 0; i < 3; i++) {
      const repo = fresh({ 'a.txt': 'a\n'.repeat(40) });
      repo.write('a.txt', 'A\n'.repeat(40));
      const d = await toolHarness(repo).call<GitDiffOutput>('git_diff');
      expect(d.files).toEqual([{ path: 'a.txt', old_path: null, additions: 40, deletions: 40, binary: false }]);
    }
  });
});
