import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GitCommitOutput } from '../../../shared/index.ts';
import { createTempRepo, type TempRepo } from '../../test-support/index.ts';
import { ToolSession } from './review.ts';
import { toolHarness, withIdentity } from '../../test-support/tool-harness.ts';

const repos: TempRepo[] = [];
afterEach(() => {
  while (repos.length) repos.pop()!.cleanup();
});
const modeOnly = () => {
  const r = withIdentity(createTempRepo({ files: { 'a.txt': 'one\n' } }));
  repos.push(r);
  fs.chmodSync(path.join(r.dir, 'a.txt'), 0o755);
  return r;
};
const headMode = (r: TempRepo) => r.git('ls-tree', 'HEAD', 'a.txt').split(' ')[0];

describe('the commit gate and a mode-only change', () => {
  for (const args of [{}, { spec: 'HEAD' }] as const) {
    it(`git_diff ${JSON.stringify(args)} that showed the mode change covers a paths commit of it`, async () => {
      const repo = modeOnly();
      const h = toolHarness(repo, { session: new ToolSession() });
      await h.call('git_diff', args);
      const out = await h.call<GitCommitOutput>('git_commit', { message: 'Make a executable', paths: ['a.txt'] });
      expect(out.files.map((f) => f.path)).toEqual(['a.txt']);
      expect(headMode(repo)).toBe('100755');
    });
  }

  it('the staged mode change is covered by git_diff staged (positive control, path-less commit)', async () => {
    const repo = modeOnly();
    repo.git('add', 'a.txt');
    const h = toolHarness(repo);
    await h.call('git_diff', { staged: true });
    await h.call('git_commit', { message: 'm' });
    expect(headMode(repo)).toBe('100755');
  });

  it('a staged mode change with git_diff staged covers a paths commit of it', async () => {
    const repo = modeOnly();
    repo.git('add', 'a.txt');
    const h = toolHarness(repo);
    await h.call('git_diff', { staged: true });
    await h.call('git_commit', { message: 'm', paths: ['a.txt'] });
    expect(headMode(repo)).toBe('100755');
  });

  it('a content edit after the mode-only review is stale, not covered', async () => {
    const repo = modeOnly();
    const h = toolHarness(repo);
    await h.call('git_diff');
    repo.write('a.txt', 'sneaked\n');
    fs.chmodSync(path.join(repo.dir, 'a.txt'), 0o755);
    const err = await h.fail('git_commit', { message: 'm', paths: ['a.txt'] });
    expect(err.code).toBe('stale_review');
    expect(headMode(repo)).toBe('100644');
  });
});
