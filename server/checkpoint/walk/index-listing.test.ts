import { expect, onTestFinished, test } from 'vitest';
import { parseIndexDebug } from '../../git/index.ts';
import { createTempRepo } from '../../test-support/temp-repo.ts';
import { listIndexFast } from './index-listing.ts';
import { runGit } from '../../git/index.ts';

test('B19: the fast index parser reads exactly what the shared parser reads (odd names, conflicts, links)', async () => {
  const repo = createTempRepo({
    files: { 'a.txt': 'a\n', 'dir/with space.txt': 'b\n', 'new\nline': 'c\n', 'ünï.txt': 'd\n' },
  });
  onTestFinished(() => repo.cleanup());
  repo.git('checkout', '-q', '-b', 'x');
  repo.write('a.txt', 'x\n');
  repo.commit('x');
  repo.git('checkout', '-q', 'main');
  repo.write('a.txt', 'main\n');
  repo.commit('main');
  try {
    repo.git('merge', '-q', 'x');
  } catch {
    // conflict wanted: stages 1-3 in the index
  }
  const raw = await runGit({ cwd: repo.dir, args: ['ls-files', '-s', '--debug', '-z'] });
  const fast = await listIndexFast(repo.dir, 5000);
  expect(fast).toEqual(parseIndexDebug(raw.stdout));
  expect(fast.some((e) => e.stage === 2)).toBe(true);
  expect(fast.length).toBeGreaterThan(4);
});
