import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CheckpointEngine } from '../types.ts';
import { settledBefore } from '../common/untouched.ts';
import type { CheckpointWatchOptions, ListingHow } from '../strategy.ts';
import { createTempRepo, type TempRepo } from '../../test-support/temp-repo.ts';
import { resolved, rows, testEngine } from '../../test-support/engine-harness.ts';
import { isWatched, warm, watchedPair, whole } from '../../test-support/watched-pair.ts';
import type { Limits } from '../../../shared/index.ts';

/**
 * The checkpoint watcher vouching for a plain folder (no git): a walk brought up to date from the
 * paths it saw is the walk of the whole tree, and whenever it cannot vouch the whole tree is walked
 * (and the listener is told why). Each run is recorded by an engine with the watcher and one
 * without, on the same folder: their rows must be the same.
 */

const folders: TempRepo[] = [];
const engines: CheckpointEngine[] = [];
afterEach(async () => {
  while (engines.length) await engines.pop()!.close();
  while (folders.length) folders.pop()!.cleanup();
});

function folderWith(files: Record<string, string> = {}): TempRepo {
  const dir = createTempRepo({
    git: false,
    files: {
      '.gitignore': 'out/\n*.log\n',
      'README.md': 'readme\n',
      'src/a.txt': 'a\n',
      'src/b.txt': 'b\n',
      'src/deep/c.txt': 'c\n',
      'docs/d.txt': 'd\n',
      'node_modules/pkg/index.js': 'module.exports = 1;\n',
      ...files,
    },
  });
  folders.push(dir);
  return dir;
}

/** Two engines on this folder, with the watcher and without (server/test-support/watched-pair.ts). */
const pair = (opts: Partial<CheckpointWatchOptions> = {}, limits: Partial<Limits> = {}) =>
  watchedPair(engines, opts, limits);

/** Every file of the folder the walk records (what the random edits pick from). */
function filesOf(dir: string): string[] {
  const out: string[] = [];
  const visit = (rel: string) => {
    for (const d of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) {
        if (d.name !== 'node_modules' && d.name !== 'out') visit(p);
      } else if (d.isFile() && p !== '.gitignore' && !p.endsWith('.log')) out.push(p);
    }
  };
  visit('');
  return out.sort();
}

describe('checkpoint watcher on a plain folder', () => {
  it('the first walk does not wait for the watcher; once it vouches, walks measure only the changed paths', async () => {
    const dir = folderWith();
    const { run } = pair();
    const first = await run(dir.dir, () => dir.write('src/a.txt', 'a2\n'));
    expect(first.how.map(whole)[0]).toBe('not_ready');
    expect(first.watched).toEqual(['M src/a.txt +1 -1']);
    await warm(run, dir.dir);
    const r = await run(dir.dir, () => dir.write('src/b.txt', 'b2\n'));
    expect(r.how).toEqual([{ watched: 0 }, { watched: 1 }]);
    expect(r.watched).toEqual(['M src/b.txt +1 -1']);
    expect(r.plain).toEqual(r.watched);
    expect(r.delta.workspace_kind).toBe('filesystem');
  });

  it('random edits, renames, mode changes, links, ignored files, folders swapped for files: the same rows as without a watcher', async () => {
    const dir = folderWith();
    const { run, told } = pair();
    await warm(run, dir.dir);
    let seed = 11;
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const abs = (p: string) => path.join(dir.dir, p);
    let n = 0;
    const op = () => {
      const all = filesOf(dir.dir);
      const pick = all[Math.floor(rand() * all.length)]!;
      switch (Math.floor(rand() * 10)) {
        case 0:
          dir.write(pick, `edit ${n++}\n`);
          break;
        case 1:
          dir.write(`src/new${n++}.txt`, 'new\n');
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
          const d = `made${n++}`;
          dir.write(`${d}/x/one.txt`, '1\n');
          dir.write(`${d}/two.txt`, '2\n');
          if (rand() < 0.5) {
            fs.rmSync(abs(`${d}/x`), { recursive: true });
            dir.write(`${d}/x`, 'now a file\n');
          }
          break;
        }
        case 7:
          // What the rules leave out: a dependency folder, a .gitignore pattern, a binary class.
          dir.write(`node_modules/pkg/f${n++}.js`, 'ignored\n');
          dir.write(`out/o${n++}.txt`, 'ignored\n');
          dir.write(`src/trace${n++}.log`, 'ignored\n');
          dir.write(`src/pic${n++}.png`, 'ignored\n');
          break;
        case 8:
          // A new dependency folder made by a command, files and all.
          dir.write(`pkg${n++}/node_modules/dep/x.js`, 'ignored\n');
          dir.write(`pkg${n}/package.json`, '{}\n');
          break;
        default:
          // The same size again within the same second: only the content tells.
          dir.write(pick, fs.readFileSync(abs(pick)).toString().replace(/./, 'Z'));
      }
    };
    for (let round = 0; round < 30; round++) {
      if (rand() < 0.5) op(); // the user, between runs
      const r = await run(dir.dir, () => {
        for (let k = 0; k < 1 + Math.floor(rand() * 3); k++) op();
      });
      expect(r.watched, `round ${round}`).toEqual(r.plain);
    }
    // Most walks came from the watcher (a folder removed or swapped sends the rest whole).
    expect(told.filter(isWatched).length).toBeGreaterThan(told.length / 2);
  });

  it('the user writing just before the checkpoint and between calls is not the run’s change', async () => {
    const dir = folderWith();
    const { run } = pair();
    await warm(run, dir.dir);
    dir.write('src/a.txt', 'user\n');
    const r = await run(dir.dir, () => dir.write('src/b.txt', 'agent\n'));
    expect(r.how.every(isWatched)).toBe(true);
    expect(r.watched).toEqual(['M src/b.txt +1 -1']);
    dir.write('src/deep/c.txt', 'user again\n');
    const r2 = await run(dir.dir, () => undefined);
    expect(r2.watched).toEqual([]);
    expect(r2.plain).toEqual([]);
  });

  it('10,000 files created by one command: walked whole (too many paths), every file counted', async () => {
    const dir = folderWith();
    const { run } = pair();
    await warm(run, dir.dir);
    const r = await run(dir.dir, () => {
      fs.mkdirSync(path.join(dir.dir, 'many'));
      for (let i = 0; i < 10_000; i++) fs.writeFileSync(path.join(dir.dir, 'many', `f${i}.txt`), `${i}\n`);
    });
    expect(r.how.map(whole)).toEqual([null, 'too_many_paths']);
    expect(r.delta.added_count).toBe(10_000);
    expect(r.watched).toEqual(r.plain);
  });

  describe('walks the whole tree, and says why', () => {
    it('control: a plain edit is vouched for', async () => {
      const dir = folderWith();
      const { run } = pair();
      await warm(run, dir.dir);
      const r = await run(dir.dir, () => dir.write('docs/d.txt', 'd2\n'));
      expect(r.how).toEqual([{ watched: 0 }, { watched: 1 }]);
    });

    it('the root .gitignore changed: ignore_rules, and a folder it no longer leaves out is watched from then on', async () => {
      const dir = folderWith({ 'out/kept.txt': 'k\n' });
      // B15 counts a file as untouched only when it was last written longer before the checkpoint
      // than the kernel's write clock can trail: the run below begins once that is so.
      const kept = path.join(dir.dir, 'out/kept.txt');
      await vi.waitFor(() => expect(settledBefore(fs.statSync(kept), Date.now())).toBe(true), { interval: 10 });
      const { run } = pair();
      await warm(run, dir.dir);
      const r = await run(dir.dir, () => dir.write('.gitignore', '*.log\n'));
      expect(r.how.map(whole)).toEqual([null, 'ignore_rules']);
      // A file the old rules left out, untouched since before the checkpoint, is no change (B15).
      expect(r.watched).toEqual(['M .gitignore +0 -1']);
      expect(r.plain).toEqual(r.watched);
      await warm(run, dir.dir);
      const later = await run(dir.dir, () => dir.write('out/kept.txt', 'k2\n'));
      expect(later.how.every(isWatched)).toBe(true);
      expect(later.watched).toEqual(['M out/kept.txt +1 -1']);
    });

    it('a watched folder moved away: folder_gone', async () => {
      const dir = folderWith();
      const { run } = pair();
      await warm(run, dir.dir);
      const r = await run(dir.dir, () => fs.renameSync(path.join(dir.dir, 'src/deep'), path.join(dir.dir, 'gone')));
      expect(r.how.map(whole)).toEqual([null, 'folder_gone']);
      expect(r.watched).toEqual(r.plain);
      expect(r.watched).toContain('R src/deep/c.txt -> gone/c.txt +0 -0');
    });

    it('more events between two sync points than the queue may hold: queue_overflow (control: fewer)', async () => {
      const dir = folderWith();
      const { run } = pair({ overflowAt: 40 });
      await warm(run, dir.dir);
      const ok = await run(dir.dir, () => dir.write('src/a.txt', 'few\n'));
      expect(ok.how.every(isWatched)).toBe(true);
      const over = await run(dir.dir, () => {
        for (let i = 0; i < 50; i++) dir.write(`src/many${i}.txt`, `many ${i}\n`);
      });
      expect(over.how.map(whole)).toEqual([null, 'queue_overflow']);
      expect(over.delta.added_count).toBe(50);
      expect(over.watched).toEqual(over.plain);
    });

    it('files past the scan limit: the walk says scan_files as without a watcher (control: within the limit, vouched)', async () => {
      const dir = folderWith();
      // README.md, .gitignore and the four under src/ and docs/.
      const { run } = pair({}, { maxScannedFiles: 8 });
      await warm(run, dir.dir);
      const ok = await run(dir.dir, () => dir.write('src/n1.txt', 'n\n'));
      expect(ok.how.every(isWatched)).toBe(true);
      expect(ok.watched).toEqual(['A src/n1.txt +1 -0']);
      const over = await run(dir.dir, () => {
        dir.write('src/n2.txt', 'n\n');
        dir.write('src/n3.txt', 'n\n');
      });
      expect(over.how.map(whole)).toEqual([null, 'scan_files']);
      expect(over.delta.truncated_reasons).toContain('scan_files');
      expect(over.watched).toEqual(over.plain);
      expect(over.delta.truncated_reasons).toEqual(over.unwatched.truncated_reasons);
    });
  });

  it('a run with its tool calls, as the bridge takes them: each call and the run list exactly their files', async () => {
    const dir = folderWith();
    const told: ListingHow[] = [];
    const on = testEngine({}, { watch: { told: (_root, how) => told.push(how) } });
    engines.push(on);
    const ws = await resolved(dir.dir);
    const call = async (id: string, act: () => void) => {
      await on.start({ sessionId: 's', changeId: id, runId: 'run', workspace: ws });
      act();
      return rows((await on.complete('s', id))!);
    };
    await on.start({ sessionId: 's', changeId: 'run', runId: 'run', workspace: ws });
    expect(await call('t1', () => dir.write('src/a.txt', 'a1\n'))).toEqual(['M src/a.txt +1 -1']);
    dir.write('docs/d.txt', 'the user\n');
    expect(await call('t2', () => dir.write('src/b.txt', 'b1\n'))).toEqual(['M src/b.txt +1 -1']);
    expect(await call('t3', () => dir.rm('src/deep/c.txt'))).toEqual(['D src/deep/c.txt +0 -1']);
    expect(await call('t4', () => undefined)).toEqual([]);
    expect(await call('t5', () => dir.write('src/a.txt', 'a\n'))).toEqual(['M src/a.txt +1 -1']);
    // The run: the user's edit is in it (it came during the run); a.txt is back as it was.
    expect(rows((await on.complete('s', 'run'))!)).toEqual([
      'M docs/d.txt +1 -1',
      'M src/b.txt +1 -1',
      'D src/deep/c.txt +0 -1',
    ]);
    expect(told.some(isWatched)).toBe(true);
  });
});
