import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommitPlan } from '../../../shared/index.ts';
import { AppError } from '../../errors.ts';
import { createTempRepo, type TempRepo } from '../../test-support/index.ts';
import { toolHarness, withIdentity } from '../../test-support/tool-harness.ts';

const repos: TempRepo[] = [];
afterEach(() => {
  while (repos.length) repos.pop()!.cleanup();
});

/** 500 bytes with NULs and a few newlines: git calls it binary. */
const BINARY = Buffer.from(Array.from({ length: 500 }, (_, i) => (i % 125 === 7 ? 10 : i % 3 === 0 ? 0 : i % 256)));

/** The plan git_commit asks approval for; the approval is denied so nothing lands. */
async function planOf(repo: TempRepo, diff: Record<string, unknown>, commit: Record<string, unknown>) {
  const plans: CommitPlan[] = [];
  const h = toolHarness(repo, {
    approve: async (plan) => {
      plans.push(plan);
      throw new AppError('approval_denied', 'denied');
    },
  });
  await h.call('git_diff', diff);
  expect((await h.fail('git_commit', { message: 'm', ...commit })).code).toBe('approval_denied');
  return plans[0]!;
}

describe('the commit plan', () => {
  it('an untracked binary file committed by paths is binary, with no line counts, and the plan says paths', async () => {
    const repo = withIdentity(createTempRepo({ files: { 'a.txt': 'one\n' } }));
    repos.push(repo);
    fs.writeFileSync(path.join(repo.dir, 'img.bin'), BINARY);
    const plan = await planOf(repo, {}, { paths: ['img.bin'] });
    expect(plan.commit).toBe('paths');
    expect(plan.files).toEqual([{ path: 'img.bin', additions: 0, deletions: 0, new: true, binary: true }]);
  });

  it('a staged binary file is binary too, text files keep their counts, and the plan says staged', async () => {
    const repo = withIdentity(createTempRepo({ files: { 'a.txt': 'one\n' } }));
    repos.push(repo);
    fs.writeFileSync(path.join(repo.dir, 'img.bin'), BINARY);
    repo.write('a.txt', 'two\nthree\n');
    repo.git('add', '-A');
    const plan = await planOf(repo, { staged: true }, {});
    expect(plan.commit).toBe('staged');
    expect(plan.files).toEqual([
      { path: 'a.txt', additions: 2, deletions: 1, new: false, binary: false },
      { path: 'img.bin', additions: 0, deletions: 0, new: true, binary: true },
    ]);
  });
});
