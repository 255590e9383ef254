import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckpointEngine } from '../types.ts';
import { createTempRepo, type TempRepo } from '../../test-support/temp-repo.ts';
import { overflowInotifyQueue } from '../../test-support/inotify-overflow.ts';
import { isWatched, warm, watchedPair, whole } from '../../test-support/watched-pair.ts';
import type { CheckpointWatchOptions } from '../strategy.ts';
import type { Limits } from '../../../shared/index.ts';

/**
 * The checkpoint watcher vouching for a git workspace: a listing made from the paths it saw is the
 * listing git gives of the whole tree, and whenever it cannot vouch the whole tree is listed (and
 * the listener is told why). Each run is recorded by an engine with the watcher and one without,
 * on the same folder: their rows must be the same.
 */

const repos: TempRepo[] = [];
const engines: CheckpointEngine[] = [];
afterEach(async () => {
  while (engines.length) await engines.pop()!.close();
  while (repos.length) repos.pop()!.cleanup();
});

function repoWith(files: Record<string, string> = {}): TempRepo {
  const repo = createTempRepo({
    files: {
      '.gitignore': 'build/\n*.log\n',
      'README.md': 'readme\n',
      'src/a.txt': 'a\n',
      'src/b.txt': 'b\n',
      'src/deep/c.txt': 'c\n',
      'docs/d.txt': 'd\n',
      ...files,
    },
  });
  repos.push(repo);
  return repo;
}

/** Two engines on this folder, with the watcher and without (server/test-support/watched-pair.ts). */
const pair = (opts: Partial<CheckpointWatchOptions> = {}, limits: Partial<Limits> = {}) =>
  watchedPair(engines, opts, limits);

describe('checkpoint watcher', () => {
  it('its sync points write nothing in the workspace: a watch of the tree sees only the run’s own file', async () => {
    const repo = repoWith();
    const { run } = pair();
    await warm(run, repo.dir);
    const seen: string[] = [];
    const spy = fs.watch(repo.dir, { persistent: false }, (_type, name) => {
      if (name !== null) seen.push(String(name));
    });
    try {
      const r = await run(repo.dir, () => repo.write('new.txt', 'n\n'));
      expect(r.how.every(isWatched)).toBe(true);
      expect(r.watched).toEqual(r.plain);
      await new Promise((res) => setTimeout(res, 50));
      // Control: the spy does see the tree's writes.
      expect(seen).toContain('new.txt');
      expect(seen.filter((n) => n !== 'new.txt')).toEqual([]);
    } finally {
      spy.close();
    }
  });

  it('the first listing does not wait for the watcher; once it vouches, listings name only the changed paths', async () => {
    const repo = repoWith();
    const { run } = pair();
    const first = await run(repo.dir, () => repo.write('src/a.txt', 'a2\n'));
    expect(first.how.map(whole)[0]).toBe('not_ready');
    expect(first.watched).toEqual(first.plain);
    await warm(run, repo.dir);
    const r = await run(repo.dir, () => repo.write('src/b.txt', 'b2\n'));
    expect(r.how).toEqual([{ watched: 0 }, { watched: 1 }]);
    expect(r.watched).toEqual(['M src/b.txt +1 -1']);
    expect(r.plain).toEqual(r.watched);
  });

  it('random edits, renames, mode changes, links, folders swapped for files, between and during runs: the same rows as without a watcher', async () => {
    const repo = repoWith();
    const { run, told } = pair();
    await warm(run, repo.dir);
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const files = () =>
      repo
        .git('ls-files', '--cached', '--others', '--exclude-standard')
        .split('\n')
        .filter((p) => p !== '' && p !== '.gitignore' && fs.existsSync(path.join(repo.dir, p)));
    let n = 0;
    const op = () => {
      const all = files();
      const pick = all[Math.floor(rand() * all.length)]!;
      const abs = (p: string) => path.join(repo.dir, p);
      switch (Math.floor(rand() * 9)) {
        case 0:
          repo.write(pick, `edit ${n++}\n`);
          break;
        case 1:
          repo.write(`src/new${n++}.txt`, 'new\n');
          break;
        case 2:
          fs.rmSync(abs(pick), { force: true });
          break;
        case 3:
          fs.renameSync(abs(pick), abs(`src/renamed${n++}.txt`));
          break;
        case 4:
          fs.chmodSync(abs(pick), fs.statSync(abs(pick)).mode & 0o100 ? 0o644 : 0o755);
          break;
        case 5:
          fs.symlinkSync('README.md', abs(`src/link${n++}`));
          break;
        case 6: {
          // A folder with files appears, and one is swapped for a file of the same name.
          const d = `made${n++}`;
          repo.write(`${d}/x/one.txt`, '1\n');
          repo.write(`${d}/two.txt`, '2\n');
          if (rand() < 0.5) {
            fs.rmSync(abs(`${d}/x`), { recursive: true });
            repo.write(`${d}/x`, 'now a file\n');
          }
          break;
        }
        case 7:
          repo.write(`build/out${n++}.o`, 'ignored\n');
          repo.write(`src/trace${n++}.log`, 'ignored\n');
          break;
        default:
          // The same size again within the same second: only the content tells.
          repo.write(pick, fs.readFileSync(abs(pick)).toString().replace(/./, 'Z'));
      }
    };
    for (let round = 0; round < 30; round++) {
      if (rand() < 0.5) op(); // the user, between runs
      const r = await run(repo.dir, () => {
        for (let k = 0; k < 1 + Math.floor(rand() * 3); k++) op();
      });
      expect(r.watched, `round ${round}`).toEqual(r.plain);
    }
    // Most listings came from the watcher (a folder removed or swapped sends the rest whole).
    expect(told.filter(isWatched).length).toBeGreaterThan(told.length / 2);
  });

  it('the user writing just before the checkpoint and between calls is not the run’s change', async () => {
    const repo = repoWith();
    const { run } = pair();
    await warm(run, repo.dir);
    repo.write('src/a.txt', 'user\n');
    const r = await run(repo.dir, () => repo.write('src/b.txt', 'agent\n'));
    expect(r.how.every(isWatched)).toBe(true);
    expect(r.watched).toEqual(['M src/b.txt +1 -1']);
    repo.write('src/deep/c.txt', 'user again\n');
    const r2 = await run(repo.dir, () => undefined);
    expect(r2.watched).toEqual([]);
    expect(r2.plain).toEqual([]);
  });

  it('10,000 files created by one command: listed whole (too many paths), every file counted', async () => {
    const repo = repoWith();
    const { run } = pair();
    await warm(run, repo.dir);
    const r = await run(repo.dir, () => {
      fs.mkdirSync(path.join(repo.dir, 'many'));
      for (let i = 0; i < 10_000; i++) fs.writeFileSync(path.join(repo.dir, 'many', `f${i}.txt`), `${i}\n`);
    });
    expect(r.how.map(whole)).toEqual([null, 'too_many_paths']);
    expect(r.delta.added_count).toBe(10_000);
    expect(r.watched).toEqual(r.plain);
  });

  describe('falls back to the whole tree, and says why', () => {
    it('control: a plain edit is vouched for', async () => {
      const repo = repoWith();
      const { run } = pair();
      await warm(run, repo.dir);
      const r = await run(repo.dir, () => repo.write('docs/d.txt', 'd2\n'));
      expect(r.how).toEqual([{ watched: 0 }, { watched: 1 }]);
    });

    it('git rewrote the index (git add, commit): the index', async () => {
      const repo = repoWith();
      const { run } = pair();
      await warm(run, repo.dir);
      const r = await run(repo.dir, () => {
        repo.write('src/a.txt', 'committed\n');
        repo.commit('during the run');
      });
      expect(r.how.map(whole)).toEqual([null, 'the index']);
      expect(r.watched).toEqual(['M src/a.txt +1 -1']);
      expect(r.plain).toEqual(r.watched);
    });

    it('a .gitignore changed: ignore_rules, and an un-ignored folder is watched from then on', async () => {
      const repo = repoWith({ 'build/kept.txt': 'k\n' });
      const { run } = pair();
      await warm(run, repo.dir);
      const r = await run(repo.dir, () => repo.write('.gitignore', '*.log\n'));
      expect(r.how.map(whole)).toEqual([null, 'ignore_rules']);
      expect(r.watched).toEqual(r.plain);
      await warm(run, repo.dir);
      const later = await run(repo.dir, () => repo.write('build/kept.txt', 'k2\n'));
      expect(later.how.every(isWatched)).toBe(true);
      expect(later.watched).toEqual(['M build/kept.txt +1 -1']);
    });

    it('a watched folder moved away: folder_gone', async () => {
      const repo = repoWith();
      const { run } = pair();
      await warm(run, repo.dir);
      const r = await run(repo.dir, () => fs.renameSync(path.join(repo.dir, 'src/deep'), path.join(repo.dir, 'gone')));
      expect(r.how.map(whole)).toEqual([null, 'folder_gone']);
      expect(r.watched).toEqual(r.plain);
      expect(r.watched).toContain('R src/deep/c.txt -> gone/c.txt +0 -0');
    });

    it('a repository made inside the workspace: git_entry', async () => {
      const repo = repoWith();
      const { run } = pair();
      await warm(run, repo.dir);
      const r = await run(repo.dir, () => {
        repo.write('inner/x.txt', 'x\n');
        repo.git('init', '-q', 'inner');
      });
      expect(r.how.map(whole)).toEqual([null, 'git_entry']);
      expect(r.watched).toEqual(r.plain);
    });

    it('more changed paths than it names: too_many_paths (control: as many as it names is vouched)', async () => {
      const repo = repoWith();
      const { run } = pair({ maxPaths: 5 });
      await warm(run, repo.dir);
      const ok = await run(repo.dir, () => {
        for (let i = 0; i < 5; i++) repo.write(`src/n${i}.txt`, 'n\n');
      });
      expect(ok.how).toEqual([{ watched: 0 }, { watched: 5 }]);
      const over = await run(repo.dir, () => {
        for (let i = 0; i < 6; i++) repo.write(`src/m${i}.txt`, 'm\n');
      });
      expect(over.how.map(whole)).toEqual([null, 'too_many_paths']);
      expect(over.watched).toEqual(over.plain);
    });

    it('more events between two sync points than the queue may hold: queue_overflow (control: fewer)', async () => {
      const repo = repoWith();
      const { run } = pair({ overflowAt: 40 });
      await warm(run, repo.dir);
      const ok = await run(repo.dir, () => repo.write('src/a.txt', 'few\n'));
      expect(ok.how.every(isWatched)).toBe(true);
      const over = await run(repo.dir, () => {
        for (let i = 0; i < 50; i++) repo.write(`src/many${i}.txt`, `many ${i}\n`);
      });
      expect(over.how.map(whole)).toEqual([null, 'queue_overflow']);
      expect(over.delta.added_count).toBe(50);
      expect(over.watched).toEqual(over.plain);
    });

    it('out of folder watches: watch_budget, every listing whole (control: the budget holds the folders)', async () => {
      const repo = repoWith();
      const { run, told } = pair({ maxWatches: 2 });
      for (let i = 0; i < 4; i++) {
        const r = await run(repo.dir, () => repo.write('src/a.txt', `x${i}\n`));
        expect(r.watched).toEqual(r.plain);
        await new Promise((res) => setTimeout(res, 20));
      }
      expect(told.some(isWatched)).toBe(false);
      expect(told.map(whole)).toContain('watch_budget');
    });
  });

  it(
    'an inotify queue that really overflowed: the whole tree is listed and every file is counted (control: without the check, files are lost)',
    { tags: ['stress'], timeout: 120_000 },
    async () => {
      // More files than the kernel's queue holds (16,384 by default), made while this process is stopped.
      const count = 17_000;
      for (const checked of [true, false]) {
        const repo = repoWith();
        const { run } = pair({ maxPaths: 100_000, ...(checked ? {} : { overflowAt: Number.POSITIVE_INFINITY }) });
        await warm(run, repo.dir);
        const r = await run(repo.dir, async () => {
          expect(await overflowInotifyQueue(repo.dir, 'burst-', count)).toBe(count);
          await new Promise((res) => setTimeout(res, 200));
        });
        if (checked) {
          expect(r.how.map(whole)).toEqual([null, 'queue_overflow']);
          expect(r.delta.added_count).toBe(count);
        } else {
          // The control: the queue dropped events, and a watcher that trusts it lists fewer files.
          expect(r.how.every(isWatched)).toBe(true);
          expect(r.delta.added_count).toBeLessThan(count);
        }
      }
    },
  );
});
