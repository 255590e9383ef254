import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempRepo, plantFilterDriver, type TempRepo } from '../../test-support/index.ts';
import { filterOverrides } from '../repo.ts';
import { runGit } from '../runner.ts';
import { toolHarness } from '../../test-support/tool-harness.ts';

const repos: TempRepo[] = [];
afterEach(() => {
  while (repos.length) repos.pop()!.cleanup();
});

/** A repository with a tracked `f.eq` edited and a tracked `g.eq` only touched (git re-hashes it). */
function repoWithEdits(): TempRepo {
  const repo = createTempRepo({ files: { 'f.eq': 'one\n', 'g.eq': 'same\n', 'a.txt': 'a\n' } });
  repos.push(repo);
  repo.write('f.eq', 'two\n');
  const future = new Date(Date.now() + 5000);
  fs.utimesSync(path.join(repo.dir, 'g.eq'), future, future);
  return repo;
}

/** Driver names git can store and `.gitattributes` can select; `-c` split the first one. */
const NAMES = ['x=y', 'x=y.clean=z', 'a.b.c', 'q"uote', "s'q", '[br]ack', 'ünï-日本', 'back\\slash'];

describe('filter drivers are switched off whatever their name', () => {
  it.each(NAMES)('driver %j: git_diff and git_status run no filter; plain git does', async (name) => {
    const repo = repoWithEdits();
    const planted = plantFilterDriver(repo, name, 'eq');
    const h = toolHarness(repo);
    await h.call('git_diff');
    await h.call('git_status');
    await h.call('git_diff', { spec: 'HEAD' });
    expect(planted.markerExists()).toBe(false);
    // Positive control: the same plant runs under plain git.
    repo.git('diff');
    expect(planted.markerExists()).toBe(true);
  });

  it.each(['p=q', 'ünï=.x'])('driver %j in the long-running process form runs neither', async (name) => {
    const repo = repoWithEdits();
    const planted = plantFilterDriver(repo, name, 'eq', 'process');
    const h = toolHarness(repo);
    await h.call('git_diff');
    await h.call('git_status');
    expect(planted.markerExists()).toBe(false);
    // Positive control: plain git starts the process filter (it then fails the handshake).
    try {
      repo.git('diff');
    } catch {
      /* the planted process does not speak the protocol; starting it is what counts */
    }
    expect(planted.markerExists()).toBe(true);
  });

  it.each([...NAMES, 'with space', 'tab\there'])(
    'driver %j: each override reaches git under the exact key',
    async (name) => {
      const repo = repoWithEdits();
      plantFilterDriver(repo, name, 'eq');
      const key = `filter.${name}.clean`;
      const plain = await runGit({ cwd: repo.dir, args: ['config', '--get', key] });
      expect(plain.stdout.toString('utf8').trim()).toMatch(/filter\.sh$/);
      const { config, drivers } = await filterOverrides(repo.dir);
      expect(drivers).toContain(name);
      const overridden = await runGit({ cwd: repo.dir, args: ['config', '--get', key], config });
      expect(overridden.stdout.toString('utf8')).toBe('\n');
    },
  );

  it('a driver whose name is not UTF-8 is refused with filter_required, and nothing runs', async () => {
    const repo = repoWithEdits();
    const name = Buffer.from([0x62, 0xff, 0x3d, 0x79]);
    const planted = plantFilterDriver(repo, name, 'eq');
    const h = toolHarness(repo);
    for (const [tool, input] of [
      ['git_diff', {}],
      ['git_status', {}],
      ['git_commit', { message: 'm', paths: ['f.eq'] }],
    ] as const) {
      const err = await h.fail(tool, input);
      expect(err.code, tool).toBe('filter_required');
      expect(err.message).toContain('b\\xff=y');
      expect(err.hint).toBeTruthy();
    }
    expect(planted.markerExists()).toBe(false);
    repo.git('diff');
    expect(planted.markerExists()).toBe(true);
  });
});
