import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { DiffProgressPayload } from '../../shared/index.ts';
import type { CheckpointEngine } from '../checkpoint/index.ts';
import {
  createTempDir,
  createTempRepo,
  deepFolders,
  inDeep,
  overflowInotifyQueue,
  removeDeep,
  startRenameStorm,
  type TempRepo,
} from '../test-support/index.ts';
import { resolved, testEngine } from '../test-support/engine-harness.ts';
import { createFakeClock } from '../test-support/fake-clock.ts';
import {
  fsFeedIgnore,
  gitFeedIgnore,
  heldInotifyWatches,
  LiveFeed,
  type FeedIgnore,
  type FeedRun,
  type LiveFeedOptions,
} from './index.ts';

const repos: TempRepo[] = [];
const feeds: LiveFeed[] = [];
const engines: CheckpointEngine[] = [];
afterEach(async () => {
  while (feeds.length) await feeds.pop()!.closeAll();
  while (engines.length) await engines.pop()!.close();
  while (repos.length) repos.pop()!.cleanup();
});

const keepAll: FeedIgnore = { skipDir: () => false, keep: async (r) => r };

function setup(more: Partial<LiveFeedOptions> = {}) {
  const events: DiffProgressPayload[] = [];
  const feed = new LiveFeed({ maxWatches: 1_000, intervalMs: 100, emit: (p) => events.push(p), ...more });
  feeds.push(feed);
  return { events, feed };
}

/** The real engine's view of a run (its checkpoint taken now), as the server hands it to the feed. */
async function realChangedSoFar(dir: string): Promise<(run: FeedRun) => Promise<string[] | null>> {
  const engine = testEngine();
  engines.push(engine);
  await engine.start({ sessionId: 's', changeId: 'run:r', runId: 'r', workspace: await resolved(dir) });
  return async (run) => {
    const d = await engine.peek(run.sessionId, run.changeId);
    return d ? d.files.map((f) => f.path) : null;
  };
}

async function waitFor<T>(fn: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Folder watches are set up asynchronously: files are touched only once the run's watcher is ready. */
async function watching(feed: LiveFeed, changeId = 'run:r'): Promise<void> {
  expect(await feed.ready('s', changeId)).toBe(true);
}

/** inotify watches this process holds, as the kernel counts them. */
const kernelWatches = (): number => heldInotifyWatches()!;

const run = (runId = 'r', root = ''): FeedRun => ({ sessionId: 's', runId, changeId: `run:${runId}`, root });

describe('live touched-files feed: watching folders', () => {
  it('a touched file is reported while the run is open, newest first, with an exact count and mode watch', async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    const { events, feed } = setup();
    expect(feed.open(run('r', repo.dir), keepAll)).toBe('watch');
    await watching(feed);
    repo.write('a.txt', 'changed\n');
    await waitFor(() => events.find((e) => e.touched_count === 1));
    repo.write('src/new.ts', 'x\n');
    const last = await waitFor(() => events.find((e) => e.touched_count === 2));
    expect(last).toMatchObject({ session_id: 's', run_id: 'r', change_id: 'run:r', available: true, mode: 'watch' });
    expect(last.touched).toEqual(['src/new.ts', 'a.txt']);
    expect(last.check_interval_ms).toBeUndefined();
  });

  it(
    'a workspace of 6,000 files (over the old 5,000-file cut-off) is watched with one watch per folder and reports touched paths',
    { tags: ['stress'] },
    async () => {
      const repo = createTempRepo({ git: false });
      repos.push(repo);
      for (let d = 0; d < 60; d++) {
        const dir = path.join(repo.dir, `pkg${d}`, 'src');
        fs.mkdirSync(dir, { recursive: true });
        for (let f = 0; f < 100; f++) fs.writeFileSync(path.join(dir, `f${f}.ts`), 'x\n');
      }
      const folders = 1 + 60 * 2;
      const before = kernelWatches();
      const { events, feed } = setup({ maxWatches: 10_000 });
      expect(feed.open(run('r', repo.dir), keepAll)).toBe('watch');
      await watching(feed);
      expect(feed.handles().folderWatches).toBe(folders);
      expect(kernelWatches() - before).toBe(folders); // and not one per file (6,000 more)
      repo.write('pkg7/src/f3.ts', 'changed\n');
      repo.write('pkg59/src/new.ts', 'new\n');
      const e = await waitFor(() => events.find((x) => x.touched_count === 2));
      expect(e).toMatchObject({ available: true, mode: 'watch' });
      expect([...e.touched].sort()).toEqual(['pkg59/src/new.ts', 'pkg7/src/f3.ts']);
      await feed.close('s', 'run:r');
      expect(kernelWatches()).toBe(before);
      expect(feed.handles()).toEqual({ watchers: 0, folderWatches: 0, pollers: 0, throttleTimers: 0, runs: 0 });
    },
  );

  it('a folder created during the run is watched at once and its files are reported', async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    const { events, feed } = setup();
    feed.open(run('r', repo.dir), keepAll);
    await watching(feed);
    fs.mkdirSync(path.join(repo.dir, 'gen/deep'), { recursive: true });
    fs.writeFileSync(path.join(repo.dir, 'gen/deep/early.ts'), 'e\n');
    await waitFor(() => events.find((e) => e.touched.includes('gen/deep/early.ts')));
    // Once the new folder is watched, a later file in it arrives through its own watch.
    await waitFor(() => (feed.handles().folderWatches === 3 ? true : undefined));
    repo.write('gen/deep/later.ts', 'l\n');
    await waitFor(() => events.find((e) => e.touched.includes('gen/deep/later.ts')));
  });

  it('a folder moved out of the workspace: its watches are released and the engine tells which files went with it', async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n', 'old/x.ts': 'x\n', 'old/in/y.ts': 'y\n' } });
    repos.push(repo);
    const elsewhere = createTempDir('rundiff-elsewhere-');
    onTestFinished(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
    const { events, feed } = setup({ changedSoFar: await realChangedSoFar(repo.dir) });
    feed.open(run('r', repo.dir), keepAll);
    await watching(feed);
    expect(feed.handles().folderWatches).toBe(3);
    // One event on the root names the folder only; no event names the files that went with it.
    fs.renameSync(path.join(repo.dir, 'old'), path.join(elsewhere, 'old'));
    const e = await waitFor(() =>
      events.find((x) => x.touched.includes('old/in/y.ts') && x.touched.includes('old/x.ts')),
    );
    expect(e.mode).toBe('watch');
    await waitFor(() => (feed.handles().folderWatches === 1 ? true : undefined));
  });

  it("ready() is true once a followed run's watcher is ready; false for a run not followed or closed before", async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    const { feed } = setup();
    expect(await feed.ready('s', 'run:none')).toBe(false);
    feed.open(run('r', repo.dir), keepAll);
    const early = feed.ready('s', 'run:r');
    await feed.close('s', 'run:r');
    expect(await early).toBe(false);
    feed.open(run('r', repo.dir), keepAll);
    expect(await feed.ready('s', 'run:r')).toBe(true);
  });

  for (const git of [true, false])
    it(`files on paths over 4,096 bytes (${git ? 'git' : 'plain folder'}): a deep folder there is watched, one made during the run too, and their files are reported`, async () => {
      const repo = createTempRepo({ git, files: { 'a.txt': 'a\n' } });
      onTestFinished(() => removeDeep(repo.dir));
      const deep = deepFolders('w', 4300);
      inDeep(repo.dir, deep, 'printf "x\\n" > there.txt');
      const key = deep.join('/');
      const { events, feed } = setup();
      expect(feed.open(run('r', repo.dir), git ? await gitFeedIgnore(repo.dir) : keepAll)).toBe('watch');
      await watching(feed);
      expect(feed.handles().folderWatches).toBe(1 + deep.length);
      inDeep(repo.dir, deep, 'printf "y\\n" > there.txt');
      await waitFor(() => events.find((e) => e.touched.includes(`${key}/there.txt`)));
      inDeep(repo.dir, deep, 'mkdir made; printf "n\\n" > made/early.txt');
      await waitFor(() => events.find((e) => e.touched.includes(`${key}/made/early.txt`)));
      // Once the new folder is watched, a later file in it arrives through its own watch.
      await waitFor(() => (feed.handles().folderWatches === 2 + deep.length ? true : undefined));
      inDeep(repo.dir, deep, 'printf "l\\n" > made/later.txt');
      const e = await waitFor(() => events.find((x) => x.touched.includes(`${key}/made/later.txt`)));
      expect(e).toMatchObject({ available: true, mode: 'watch' });
      expect(e.touched).not.toContain(`${key}/made`); // a folder is watched, not listed as a file
    });

  it('B14: paths git ignores are not reported, tracked files are', async () => {
    const repo = createTempRepo({ files: { '.gitignore': 'logs/\n*.tmp\n', 'keep.txt': 'k\n' } });
    repos.push(repo);
    fs.mkdirSync(path.join(repo.dir, 'logs'));
    const { events, feed } = setup();
    feed.open(run('r', repo.dir), await gitFeedIgnore(repo.dir));
    await watching(feed);
    repo.write('logs/x.log', 'l\n');
    repo.write('scratch.tmp', 't\n');
    repo.write('keep.txt', 'k2\n');
    const e = await waitFor(() => events.find((x) => x.touched.includes('keep.txt')));
    // A file written after the ignored ones: once its event is in, theirs would have been too.
    repo.write('later.txt', 'l\n');
    await waitFor(() => events.find((x) => x.touched.includes('later.txt')));
    const all = new Set(events.flatMap((x) => x.touched));
    expect(e.available).toBe(true);
    expect(all.has('logs/x.log')).toBe(false);
    expect(all.has('scratch.tmp')).toBe(false);
    // The ignored folder was never watched: root and nothing else.
    expect(feed.handles().folderWatches).toBe(1);
  });

  it('a planted core.worktree naming another existing folder does not change which paths git ignores', async () => {
    const elsewhere = createTempDir('rundiff-elsewhere-');
    onTestFinished(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
    fs.writeFileSync(path.join(elsewhere, '.gitignore'), 'keep.txt\n');
    const repo = createTempRepo({ files: { '.gitignore': 'logs/\n*.tmp\n', 'keep.txt': 'k\n' } });
    repos.push(repo);
    fs.mkdirSync(path.join(repo.dir, 'logs'));
    repo.git('config', 'core.worktree', elsewhere);
    const ignore = await gitFeedIgnore(repo.dir);
    expect(ignore.skipDir('logs')).toBe(true);
    expect(await ignore.keep(['keep.txt', 'new.txt', 'scratch.tmp', 'logs/x.log'])).toEqual(['keep.txt', 'new.txt']);
  });

  it('a symlinked folder is not followed: edits in the folder it points to are not reported', async () => {
    const outside = createTempDir('rundiff-outside-');
    onTestFinished(() => fs.rmSync(outside, { recursive: true, force: true }));
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    fs.symlinkSync(outside, path.join(repo.dir, 'link'));
    fs.mkdirSync(path.join(repo.dir, 'loop'));
    fs.symlinkSync('..', path.join(repo.dir, 'loop', 'up'));
    fs.symlinkSync('self', path.join(repo.dir, 'self'));
    const { events, feed } = setup();
    feed.open(run('r', repo.dir), keepAll);
    await watching(feed);
    expect(feed.handles().folderWatches).toBe(2); // the root and loop/
    fs.writeFileSync(path.join(outside, 'secret.txt'), 's\n');
    repo.write('b.txt', 'b\n');
    await waitFor(() => events.find((e) => e.touched.includes('b.txt')));
    expect(events.flatMap((e) => e.touched).some((p) => p.startsWith('link/'))).toBe(false);
  });

  it('overlapping runs on one folder share one watcher, each sees its own touches, and nothing survives its runs', async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n', 'sub/b.txt': 'b\n' } });
    repos.push(repo);
    const { events, feed } = setup();
    feed.open(run('r1', repo.dir), keepAll);
    await watching(feed, 'run:r1');
    repo.write('first.txt', '1\n');
    await waitFor(() => events.find((e) => e.run_id === 'r1' && e.touched.includes('first.txt')));
    feed.open(run('r2', repo.dir), keepAll);
    expect(feed.watcherCount()).toBe(1);
    expect(feed.handles().folderWatches).toBe(2);
    repo.write('second.txt', '2\n');
    const r2 = await waitFor(() => events.find((e) => e.run_id === 'r2' && e.touched.includes('second.txt')));
    expect(r2.touched).not.toContain('first.txt');
    await feed.close('s', 'run:r1');
    expect(feed.watcherCount()).toBe(1);
    await feed.close('s', 'run:r2');
    expect(feed.handles()).toEqual({ watchers: 0, folderWatches: 0, pollers: 0, throttleTimers: 0, runs: 0 });
    expect(feed.isOpen('s', 'run:r2')).toBe(false);
  });

  it('progress events are throttled to one per interval per run', async () => {
    const repo = createTempRepo({ git: false });
    repos.push(repo);
    const { events, feed } = setup();
    feed.open(run('r', repo.dir), keepAll);
    await watching(feed);
    const start = Date.now();
    for (let i = 0; i < 30; i++) {
      repo.write(`f${i}.txt`, `${i}\n`);
      await new Promise((r) => setTimeout(r, 10));
    }
    await waitFor(() => events.find((e) => e.touched_count === 30));
    const elapsed = Date.now() - start;
    // 100 ms interval: never more events than intervals elapsed (+1 for the leading one).
    expect(events.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 1);
  });

  it('the touched list is bounded while the count stays exact', async () => {
    const repo = createTempRepo({ git: false });
    repos.push(repo);
    const { events, feed } = setup({ maxListed: 5 });
    feed.open(run('r', repo.dir), keepAll);
    await watching(feed);
    for (let i = 0; i < 12; i++) repo.write(`f${i}.txt`, `${i}\n`);
    const e = await waitFor(() => events.find((x) => x.touched_count === 12));
    expect(e.touched).toHaveLength(5);
  });
});

describe('live touched-files feed: periodic checks where watching is not possible', () => {
  it('a watch budget smaller than the folders: the run is checked periodically and its touched paths are reported', async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n', 'x/b.txt': 'b\n', 'y/c.txt': 'c\n' } });
    repos.push(repo);
    const { events, feed } = setup({ maxWatches: 2, changedSoFar: await realChangedSoFar(repo.dir) });
    expect(feed.open(run('r', repo.dir), keepAll)).toBe('watch');
    await waitFor(() => (feed.mode('s', 'run:r') === 'poll' ? true : undefined));
    expect(await feed.ready('s', 'run:r')).toBe(false);
    expect(feed.handles()).toMatchObject({ watchers: 0, folderWatches: 0, pollers: 1 });
    const first = await waitFor(() => events.find((e) => e.mode === 'poll'));
    expect(first).toMatchObject({
      available: true,
      reason: 'watch_budget',
      touched_count: 0,
      check_interval_ms: 1_000,
    });
    repo.write('x/b.txt', 'changed\n');
    repo.write('y/new.txt', 'n\n');
    const e = await waitFor(() => events.find((x) => x.touched_count === 2));
    expect(e).toMatchObject({ available: true, mode: 'poll', reason: 'watch_budget' });
    expect(e.touched).toEqual(['x/b.txt', 'y/new.txt']);
    await feed.close('s', 'run:r');
    expect(feed.handles()).toEqual({ watchers: 0, folderWatches: 0, pollers: 0, throttleTimers: 0, runs: 0 });
  });

  it('a later run on a workspace found too big to watch is checked periodically at once, without walking it again', async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n', 'x/b.txt': 'b\n', 'y/c.txt': 'c\n' } });
    repos.push(repo);
    const { feed } = setup({ maxWatches: 2, changedSoFar: async () => [] });
    expect(feed.open(run('r1', repo.dir), keepAll)).toBe('watch'); // control: the first run tries
    await waitFor(() => (feed.mode('s', 'run:r1') === 'poll' ? true : undefined));
    expect(feed.open(run('r2', repo.dir), keepAll)).toBe('poll');
    expect(feed.watcherCount()).toBe(0);
    expect(feed.stats().switchedToPoll).toBe(2);
  });

  it('control: the same workspace within the budget is watched', async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n', 'x/b.txt': 'b\n', 'y/c.txt': 'c\n' } });
    repos.push(repo);
    const { feed } = setup({ maxWatches: 3, changedSoFar: await realChangedSoFar(repo.dir) });
    feed.open(run('r', repo.dir), keepAll);
    await watching(feed);
    expect(feed.handles()).toMatchObject({ watchers: 1, folderWatches: 3, pollers: 0 });
  });

  it('the pause between checks follows their measured cost, and new paths list first', async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    const clock = createFakeClock();
    const answers: { costMs: number; paths: string[] }[] = [
      { costMs: 30, paths: ['a.txt'] },
      { costMs: 700, paths: ['a.txt', 'b.txt'] },
      { costMs: 20, paths: ['a.txt', 'b.txt', 'c.txt'] },
    ];
    let n = 0;
    const { events, feed } = setup({
      now: clock.now,
      timers: clock.timers,
      changedSoFar: async () => {
        const a = answers[Math.min(n++, answers.length - 1)]!;
        clock.advance(a.costMs);
        return a.paths;
      },
    });
    feed.open(run('r', repo.dir), null);
    expect(feed.mode('s', 'run:r')).toBe('poll');
    await waitFor(() => (events.length === 1 ? true : undefined));
    expect(feed.checkIntervalMs('s', 'run:r')).toBe(1_000);
    clock.advance(1_000);
    await waitFor(() => (events.length === 2 ? true : undefined));
    expect(feed.checkIntervalMs('s', 'run:r')).toBe(6_300);
    clock.advance(6_299);
    await Promise.resolve();
    expect(n).toBe(2);
    clock.advance(1);
    await waitFor(() => (events.length === 3 ? true : undefined));
    expect(events.map((e) => [e.touched, e.check_interval_ms, e.reason])).toEqual([
      [['a.txt'], 1_000, 'watch_failed'],
      [['b.txt', 'a.txt'], 6_000, 'watch_failed'],
      [['c.txt', 'b.txt', 'a.txt'], 1_000, 'watch_failed'],
    ]);
    await feed.close('s', 'run:r');
    expect(clock.liveTimers()).toBe(0);
    expect(feed.handles().pollers).toBe(0);
  });

  it('a check that finds the checkpoint gone ends the feed without a word; a failing check says check_failed', async () => {
    const repo = createTempRepo({ git: false });
    repos.push(repo);
    const clock = createFakeClock();
    const gone = setup({ now: clock.now, timers: clock.timers, changedSoFar: async () => null });
    gone.feed.open(run('r', repo.dir), null);
    await waitFor(() => (gone.feed.isOpen('s', 'run:r') ? undefined : true));
    expect(gone.events).toEqual([]);
    const failing = setup({
      now: clock.now,
      timers: clock.timers,
      changedSoFar: async () => {
        throw new Error('no disk');
      },
    });
    failing.feed.open(run('r', repo.dir), null);
    for (let i = 0; i < 3 && failing.feed.isOpen('s', 'run:r'); i++) {
      await waitFor(() => (clock.liveTimers() > 0 || !failing.feed.isOpen('s', 'run:r') ? true : undefined));
      clock.advance(60_000);
    }
    const off = await waitFor(() => failing.events.find((e) => !e.available));
    expect(off).toMatchObject({ available: false, reason: 'check_failed' });
    expect(clock.liveTimers()).toBe(0);
  });

  it('without a way to check, a run that cannot be watched says available:false with the reason', () => {
    const repo = createTempRepo({ git: false });
    repos.push(repo);
    const { events, feed } = setup();
    expect(feed.open(run('r', repo.dir), null)).toBeNull();
    expect(events).toEqual([
      {
        session_id: 's',
        run_id: 'r',
        change_id: 'run:r',
        available: false,
        reason: 'watch_failed',
        touched: [],
        touched_count: 0,
      },
    ]);
  });

  // One window longer than any test: the switch depends on the number of events, not on speed.
  const stormBudget = { maxEventsPerWindow: 1_000, eventWindowMs: 600_000 };

  async function storm(root: string, feed: LiveFeed, stopWhen: () => boolean) {
    const s = startRenameStorm(root, { from: 'storm-a.txt', to: 'storm-b.txt', pairs: 20_000, maxMs: 20_000 });
    onTestFinished(() => s.stop());
    await waitFor(() => (stopWhen() || s.child.exitCode !== null ? true : undefined), 30_000);
    s.stop();
    await s.done.catch(() => 0);
    return feed.stats();
  }

  it('a rename storm closes the watcher within its event budget and the run goes on with periodic checks', async () => {
    const repo = createTempRepo({ git: false, files: { 'storm-a.txt': 's\n' } });
    repos.push(repo);
    const { events, feed } = setup({ ...stormBudget, changedSoFar: await realChangedSoFar(repo.dir) });
    feed.open(run('r', repo.dir), keepAll);
    await watching(feed);
    const stats = await storm(repo.dir, feed, () => feed.mode('s', 'run:r') === 'poll');
    expect(stats.switchedOff).toBe(1);
    expect(stats.eventsHandled).toBeLessThanOrEqual(stormBudget.maxEventsPerWindow + 1);
    // The watcher is closed: nothing more of the storm reaches the process through it.
    expect(feed.handles()).toMatchObject({ watchers: 0, folderWatches: 0, pollers: 1 });
    expect(feed.stats().eventsHandled).toBe(stats.eventsHandled);
    // Not dark: the periodic check reports what the run changed.
    repo.write('after.txt', 'a\n');
    const e = await waitFor(() => events.find((x) => x.mode === 'poll' && x.touched.includes('after.txt')));
    expect(e).toMatchObject({ available: true, reason: 'too_many_events' });
    expect(events.some((x) => !x.available)).toBe(false);
  });

  it('control: without an event budget the same storm makes the watcher handle far more events than that budget', async () => {
    const repo = createTempRepo({ git: false, files: { 'storm-a.txt': 's\n' } });
    repos.push(repo);
    const { events, feed } = setup({ maxEventsPerWindow: Number.POSITIVE_INFINITY });
    feed.open(run('r', repo.dir), keepAll);
    await watching(feed);
    const stats = await storm(repo.dir, feed, () => feed.stats().eventsHandled > 3 * stormBudget.maxEventsPerWindow);
    expect(stats.eventsHandled).toBeGreaterThan(3 * stormBudget.maxEventsPerWindow);
    expect(events.some((e) => e.mode === 'poll' || !e.available)).toBe(false);
    expect(feed.watcherCount()).toBe(1);
  });

  // More files than the kernel's queue holds (16,384 by default), made while this process is stopped.
  const overflowFiles = 17_000;

  it(
    'an inotify queue overflow moves the run to periodic checks on the default event budget, and the count stays exact',
    { tags: ['stress'], timeout: 90_000 },
    async () => {
      const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n' } });
      repos.push(repo);
      const { events, feed } = setup({ changedSoFar: await realChangedSoFar(repo.dir) });
      feed.open(run('r', repo.dir), keepAll);
      await watching(feed);
      expect(await overflowInotifyQueue(repo.dir, 'burst-', overflowFiles)).toBe(overflowFiles);
      const e = await waitFor(() => events.find((x) => x.mode === 'poll' && x.touched_count === overflowFiles), 60_000);
      expect(e).toMatchObject({ available: true, reason: 'too_many_events' });
    },
  );

  it(
    'control: without an event budget the same overflow loses events the watcher never hears of',
    { tags: ['stress'], timeout: 60_000 },
    async () => {
      const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n' } });
      repos.push(repo);
      const { events, feed } = setup({ maxEventsPerWindow: Number.POSITIVE_INFINITY });
      feed.open(run('r', repo.dir), keepAll);
      await watching(feed);
      expect(await overflowInotifyQueue(repo.dir, 'burst-', overflowFiles)).toBe(overflowFiles);
      // Whatever was queued is delivered at once; then a marker file shows the watcher has caught up.
      repo.write('marker.txt', 'm\n');
      const last = await waitFor(() => events.find((x) => x.touched[0] === 'marker.txt'), 30_000);
      expect(last.mode).toBe('watch');
      expect(last.touched_count - 1).toBeLessThan(overflowFiles);
    },
  );

  it('a run touching more distinct paths than a watch tracks is checked periodically instead, with the exact count', async () => {
    const repo = createTempRepo({ git: false });
    repos.push(repo);
    const { events, feed } = setup({ maxTrackedPaths: 10, changedSoFar: await realChangedSoFar(repo.dir) });
    feed.open(run('r', repo.dir), keepAll);
    await watching(feed);
    for (let i = 0; i < 30; i++) repo.write(`f${i}.txt`, `${i}\n`);
    const e = await waitFor(() => events.find((x) => x.mode === 'poll' && x.touched_count === 30));
    expect(e).toMatchObject({ available: true, reason: 'too_many_paths' });
    expect(e.touched.length).toBeLessThanOrEqual(10);
    expect(events.filter((x) => x.mode === 'watch').every((x) => x.touched_count <= 10)).toBe(true);
    expect(feed.handles()).toMatchObject({ watchers: 0, folderWatches: 0, pollers: 1 });
  });
});

describe('live feed ignore rules', () => {
  it('outside git the root .gitignore is read without following a symlink out of the workspace', () => {
    const outside = createTempDir('rundiff-outside-');
    onTestFinished(() => fs.rmSync(outside, { recursive: true, force: true }));
    fs.writeFileSync(path.join(outside, 'rules'), '*.txt\n');
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    fs.symlinkSync(path.join(outside, 'rules'), path.join(repo.dir, '.gitignore'));
    // Control: reading the name follows the link and finds the outside rules.
    expect(fs.readFileSync(path.join(repo.dir, '.gitignore'), 'utf8')).toBe('*.txt\n');
    const logged: string[] = [];
    return fsFeedIgnore(repo.dir, (m) => logged.push(m))
      .keep(['a.txt'])
      .then((kept) => {
        expect(kept).toEqual(['a.txt']);
        expect(logged.join('\n')).toContain('.gitignore not used (symlink)');
      });
  });

  it('outside git a regular root .gitignore still applies to the feed', async () => {
    const repo = createTempRepo({ git: false, files: { '.gitignore': '*.log\n', 'a.txt': 'a\n' } });
    repos.push(repo);
    expect(await fsFeedIgnore(repo.dir).keep(['a.txt', 'x.log'])).toEqual(['a.txt']);
  });
});
