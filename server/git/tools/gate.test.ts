import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommitPlan, GitCommitOutput, GitDiffOutput } from '../../../shared/index.ts';
import { AppError } from '../../errors.ts';
import {
  ALL_PLANTS_RAN,
  createTempRepo,
  plantControls,
  plantHostileConfig,
  type TempRepo,
} from '../../test-support/index.ts';
import { ToolSession } from './review.ts';
import { toolHarness, withIdentity } from '../../test-support/tool-harness.ts';

const repos: TempRepo[] = [];
const fresh = (files: Record<string, string> = { 'a.txt': 'one\n', 'b.txt': 'bee\n' }) => {
  const r = withIdentity(createTempRepo({ files }));
  repos.push(r);
  return r;
};
afterEach(() => {
  while (repos.length) repos.pop()!.cleanup();
});
const head = (r: TempRepo) => r.git('rev-parse', 'HEAD').trim();

describe('the commit gate', () => {
  it('a staged diff, then a path-less commit lands exactly the staged set', async () => {
    const repo = fresh();
    repo.write('a.txt', 'two\n');
    repo.write('b.txt', 'unstaged edit\n');
    repo.git('add', 'a.txt');
    const h = toolHarness(repo);
    await h.call('git_diff', { staged: true });
    const out = await h.call<GitCommitOutput>('git_commit', { message: 'Update a' });
    expect(out.hash).toBe(head(repo));
    expect(out.files).toEqual([{ path: 'a.txt', additions: 1, deletions: 1 }]);
    expect(out.summary).toContain('Update a');
    expect(repo.git('status', '--porcelain')).toBe(' M b.txt\n');
  });

  it('a work-tree diff, then a paths commit stages and commits exactly those paths, new files included', async () => {
    const repo = fresh();
    repo.write('a.txt', 'two\n');
    repo.write('new file.txt', 'n\n');
    repo.write('b.txt', 'other\n');
    repo.git('add', 'b.txt'); // staged, but not part of the paths commit
    const h = toolHarness(repo);
    await h.call('git_diff');
    const out = await h.call<GitCommitOutput>('git_commit', { message: 'Two files', paths: ['a.txt', 'new file.txt'] });
    expect(out.files.map((f) => f.path)).toEqual(['a.txt', 'new file.txt']);
    expect(repo.git('status', '--porcelain')).toBe('M  b.txt\n');
  });

  it('refuses a commit without a diff (review_required names the files)', async () => {
    const repo = fresh();
    repo.write('a.txt', 'two\n');
    repo.git('add', 'a.txt');
    const before = head(repo);
    const h = toolHarness(repo);
    const err = await h.fail('git_commit', { message: 'm' });
    expect(err.code).toBe('review_required');
    expect(err.details?.files).toEqual(['a.txt']);
    // A work-tree diff does not review the staged set.
    await h.call('git_diff');
    expect((await h.fail('git_commit', { message: 'm' })).code).toBe('review_required');
    // Another session's review does not count.
    const other = toolHarness(repo);
    await other.call('git_diff', { staged: true });
    expect((await h.fail('git_commit', { message: 'm' })).code).toBe('review_required');
    expect(head(repo)).toBe(before);
  });

  it('refuses as stale after a git add of another file, and after an edit of a covered file', async () => {
    const repo = fresh();
    repo.write('a.txt', 'two\n');
    repo.git('add', 'a.txt');
    const h = toolHarness(repo);
    await h.call('git_diff', { staged: true });
    repo.write('b.txt', 'sneaked in\n');
    repo.git('add', 'b.txt');
    expect((await h.fail('git_commit', { message: 'm' })).code).toBe('stale_review');

    const repo2 = fresh();
    repo2.write('a.txt', 'two\n');
    const h2 = toolHarness(repo2);
    await h2.call('git_diff');
    repo2.write('a.txt', 'edited after the review\n');
    const err = await h2.fail('git_commit', { message: 'm', paths: ['a.txt'] });
    expect(err.code).toBe('stale_review');
    expect(err.details?.files).toEqual(['a.txt']);
    expect(repo2.git('log', '--oneline').trim().split('\n')).toHaveLength(1);
  });

  it('one review allows one commit; read tools in between do not void it', async () => {
    const repo = fresh();
    repo.write('a.txt', 'two\n');
    const h = toolHarness(repo);
    await h.call('git_diff');
    await h.call('git_status');
    await h.call('git_log');
    await h.call('git_diff', { staged: true });
    await h.call('git_commit', { message: 'first', paths: ['a.txt'] });
    repo.write('a.txt', 'three\n');
    const err = await h.fail('git_commit', { message: 'second', paths: ['a.txt'] });
    expect(err.code).toBe('review_required');
  });

  it('a diff whose budget left a file out does not cover it; following next_offset does', async () => {
    const repo = fresh({ 'a.txt': 'a\n'.repeat(40), 'b.txt': 'b\n'.repeat(40) });
    repo.write('a.txt', 'A\n'.repeat(40));
    repo.write('b.txt', 'B\n'.repeat(40));
    const h = toolHarness(repo);
    const page = await h.call<GitDiffOutput>('git_diff', { max_bytes: 300 });
    expect(page.omitted.map((o) => o.path)).toContain('b.txt');
    const err = await h.fail('git_commit', { message: 'm', paths: ['a.txt', 'b.txt'] });
    expect(err.code).toBe('review_required');
    expect(err.details?.files).toContain('b.txt');
    let next = page.next_offset;
    while (next !== null)
      next = (await h.call<GitDiffOutput>('git_diff', { max_bytes: 300, offset: next })).next_offset;
    await h.call('git_commit', { message: 'm', paths: ['a.txt', 'b.txt'] });
  });

  it('a partially staged file in a paths commit needs its staged part reviewed too', async () => {
    const repo = fresh();
    repo.write('a.txt', 'two\n');
    repo.git('add', 'a.txt');
    repo.write('a.txt', 'three\n');
    const h = toolHarness(repo);
    await h.call('git_diff');
    expect((await h.fail('git_commit', { message: 'm', paths: ['a.txt'] })).code).toBe('review_required');
    await h.call('git_diff', { staged: true });
    await h.call('git_commit', { message: 'm', paths: ['a.txt'] });
    expect(repo.git('show', 'HEAD:a.txt')).toBe('three\n');
  });
});

describe('git_commit refusals', () => {
  it('nothing_to_commit, missing_identity, index_locked, each with a hint', async () => {
    const repo = fresh();
    const h = toolHarness(repo);
    const nothing = await h.fail('git_commit', { message: 'm' });
    expect(nothing.code).toBe('nothing_to_commit');
    expect(nothing.hint).toBeTruthy();

    const anon = createTempRepo({ files: { 'a.txt': '1\n' } });
    repos.push(anon);
    anon.write('a.txt', '2\n');
    const ha = toolHarness(anon);
    await ha.call('git_diff');
    const id = await ha.fail('git_commit', { message: 'm', paths: ['a.txt'] });
    expect(id.code).toBe('missing_identity');
    expect(id.hint).toMatch(/git config/);
    // The user's global identity is found (here through GIT_CONFIG_GLOBAL, as git itself would).
    const globalFile = path.join(anon.dir, '..', `${path.basename(anon.dir)}-gitconfig`);
    fs.writeFileSync(globalFile, '[user]\n\tname = Global User\n\temail = global@example.invalid\n');
    const hg = toolHarness(anon, { env: { GIT_CONFIG_GLOBAL: globalFile } });
    await hg.call('git_diff');
    await hg.call('git_commit', { message: 'm', paths: ['a.txt'] });
    expect(anon.git('log', '-1', '--format=%an <%ae>').trim()).toBe('Global User <global@example.invalid>');
    fs.rmSync(globalFile);

    repo.write('a.txt', 'two\n');
    await h.call('git_diff');
    fs.writeFileSync(path.join(repo.dir, '.git', 'index.lock'), '');
    const locked = await h.fail('git_commit', { message: 'm', paths: ['a.txt'] });
    expect(locked.code).toBe('index_locked');
    expect(locked.hint).toMatch(/index\.lock/);
  });

  it('runs no hook and refuses filter_required for a path that needs a configured filter driver', async () => {
    const repo = fresh({ 'a.txt': 'one\n', 'lfs.bin': 'pointer\n' });
    const { marker, markerExists } = plantHostileConfig(repo);
    // Only lfs.bin uses the filter; the planted `* filter=evil` is replaced.
    fs.writeFileSync(path.join(repo.dir, '.git', 'info', 'attributes'), 'lfs.bin filter=evil\n');
    repo.write('a.txt', 'two\n');
    repo.write('lfs.bin', 'big content\n');
    const h = toolHarness(repo);
    await h.call('git_diff');
    const err = await h.fail('git_commit', { message: 'm', paths: ['lfs.bin'] });
    expect(err.code).toBe('filter_required');
    await h.call('git_commit', { message: 'm', paths: ['a.txt'] });
    expect(markerExists()).toBe(false);
    // Positive control: plain git runs each planted mechanism on the still-modified lfs.bin.
    fs.appendFileSync(path.join(repo.dir, '.git', 'info', 'attributes'), 'lfs.bin diff=evil\n');
    expect(plantControls(repo, 'evil', marker)).toEqual(ALL_PLANTS_RAN);
  });

  it('asks approve(plan) before writing; a denial commits nothing', async () => {
    const repo = fresh();
    repo.write('a.txt', 'two\n');
    repo.write('fresh.txt', 'x\ny\n');
    const plans: CommitPlan[] = [];
    const deny = toolHarness(repo, {
      approve: async (plan) => {
        plans.push(plan);
        throw new AppError('approval_denied', 'denied by a person');
      },
    });
    await deny.call('git_diff');
    expect((await deny.fail('git_commit', { message: 'msg', paths: ['a.txt', 'fresh.txt'] })).code).toBe(
      'approval_denied',
    );
    expect(plans[0]).toEqual({
      repository: path.basename(repo.dir),
      message: 'msg',
      commit: 'paths',
      files: [
        { path: 'a.txt', additions: 1, deletions: 1, new: false, binary: false },
        { path: 'fresh.txt', additions: 2, deletions: 0, new: true, binary: false },
      ],
    });
    expect(repo.git('log', '--oneline').trim().split('\n')).toHaveLength(1);
    const allow = toolHarness(repo, { approve: async () => undefined, session: new ToolSession() });
    await allow.call('git_diff');
    await allow.call('git_commit', { message: 'msg', paths: ['a.txt', 'fresh.txt'] });
  });
});
