import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { DiffProgressPayload } from '../../shared/index.ts';
import { createTempDir, createTempRepo, startRenameStorm, type TempRepo } from '../test-support/index.ts';
import { fsFeedIgnore, gitFeedIgnore, LiveFeed, type FeedIgnore, type LiveFeedOptions } from './index.ts';

const repos: TempRepo[] = [];
const feeds: LiveFeed[] = [];
afterEach(async () => {
  while (feeds.length) await feeds.pop()!.closeAll();
  while (repos.length) repos.pop()!.cleanup();
});

const keepAll: FeedIgnore = { skipDir: () => false, keep: async (r) => r };

function setup(maxFiles = 100, more: Partial<LiveFeedOptions> = {}) {
  const events: DiffProgressPayload[] = [];
  const feed = new LiveFeed({ maxFiles, intervalMs: 100, emit: (p) => events.push(p), ...more });
  feeds.push(feed);
  return { events, feed };
}

async function waitFor<T>(fn: () => T | undefined, ms = 5_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** chokidar reports "ready" asynchronously: files are touched only once the run's watcher is ready. */
async function watching(feed: LiveFeed, changeId = 'run:r'): Promise<void> {
  expect(await feed.ready('s', changeId)).toBe(true);
}

describe('live touched-files feed', () => {
  it('a touched file is reported while the run is open, with an exact count', async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    const { events, feed } = setup();
    const run = { sessionId: 's', runId: 'r', changeId: 'run:r', root: repo.dir };
    expect(feed.open(run, { scannedFiles: 1, truncated: false }, keepAll)).toBe(true);
    await watching(feed);
    repo.write('a.txt', 'changed\n');
    repo.write('src/new.ts', 'x\n');
    const last = await waitFor(() => events.find((e) => e.touched_count === 2));
    expect(last).toMatchObject({ session_id: 's', run_id: 'r', change_id: 'run:r', available: true });
    expect(last.touched.sort()).toEqual(['a.txt', 'src/new.ts']);
  });

  it("ready() is true once a followed run's watcher is ready; false for a run not followed or closed before", async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    const { feed } = setup();
    expect(await feed.ready('s', 'run:none')).toBe(false);
    feed.open(
      { sessionId: 's', runId: 'r', changeId: 'run:r', root: repo.dir },
      { scannedFiles: 1, truncated: false },
      keepAll,
    );
    const early = feed.ready('s', 'run:r');
    await feed.close('s', 'run:r');
    expect(await early).toBe(false);
    feed.open(
      { sessionId: 's', runId: 'r', changeId: 'run:r', root: repo.dir },
      { scannedFiles: 1, truncated: false },
      keepAll,
    );
    expect(await feed.ready('s', 'run:r')).toBe(true);
  });

  it('B14: paths git ignores are not reported, tracked files are', async () => {
    const repo = createTempRepo({ files: { '.gitignore': 'logs/\n*.tmp\n', 'keep.txt': 'k\n' } });
    repos.push(repo);
    fs.mkdirSync(path.join(repo.dir, 'logs'));
    const { events, feed } = setup();
    feed.open(
      { sessionId: 's', runId: 'r', changeId: 'run:r', root: repo.dir },
      { scannedFiles: 2, truncated: false },
      await gitFeedIgnore(repo.dir),
    );
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
  });

  it('a workspace over the file threshold reports too_many_files and starts no watcher', () => {
    const repo = createTempRepo({ git: false });
    repos.push(repo);
    const { events, feed } = setup(10);
    expect(
      feed.open(
        { sessionId: 's', runId: 'r', changeId: 'run:r', root: repo.dir },
        { scannedFiles: 11, truncated: false },
        keepAll,
      ),
    ).toBe(false);
    expect(
      feed.open(
        { sessionId: 's', runId: 'r2', changeId: 'run:r2', root: repo.dir },
        { scannedFiles: 5, truncated: true },
        keepAll,
      ),
    ).toBe(false);
    expect(events.map((e) => [e.available, e.reason])).toEqual([
      [false, 'too_many_files'],
      [false, 'too_many_files'],
    ]);
    expect(feed.watcherCount()).toBe(0);
  });

  it('a symlink loop does not crash the feed, and events still arrive', async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    fs.mkdirSync(path.join(repo.dir, 'loop'));
    fs.symlinkSync('..', path.join(repo.dir, 'loop', 'up'));
    fs.symlinkSync('self', path.join(repo.dir, 'self'));
    const { events, feed } = setup();
    feed.open(
      { sessionId: 's', runId: 'r', changeId: 'run:r', root: repo.dir },
      { scannedFiles: 1, truncated: false },
      keepAll,
    );
    await watching(feed);
    repo.write('b.txt', 'b\n');
    await waitFor(() => events.find((e) => e.touched.includes('b.txt')));
  });

  it('overlapping runs on one folder share one watcher, each sees its own touches, and no watcher survives its runs', async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    const { events, feed } = setup();
    feed.open(
      { sessionId: 's', runId: 'r1', changeId: 'run:r1', root: repo.dir },
      { scannedFiles: 1, truncated: false },
      keepAll,
    );
    await watching(feed, 'run:r1');
    repo.write('first.txt', '1\n');
    await waitFor(() => events.find((e) => e.run_id === 'r1' && e.touched.includes('first.txt')));
    feed.open(
      { sessionId: 's', runId: 'r2', changeId: 'run:r2', root: repo.dir },
      { scannedFiles: 2, truncated: false },
      keepAll,
    );
    expect(feed.watcherCount()).toBe(1);
    repo.write('second.txt', '2\n');
    const r2 = await waitFor(() => events.find((e) => e.run_id === 'r2' && e.touched.includes('second.txt')));
    expect(r2.touched).not.toContain('first.txt');
    await feed.close('s', 'run:r1');
    expect(feed.watcherCount()).toBe(1);
    await feed.close('s', 'run:r2');
    expect(feed.watcherCount()).toBe(0);
    expect(feed.isOpen('s', 'run:r2')).toBe(false);
  });

  it('progress events are throttled to one per interval per run', async () => {
    const repo = createTempRepo({ git: false });
    repos.push(repo);
    const { events, feed } = setup();
    feed.open(
      { sessionId: 's', runId: 'r', changeId: 'run:r', root: repo.dir },
      { scannedFiles: 0, truncated: false },
      keepAll,
    );
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

  // One window longer than any test: the switch-off depends on the number of events, not on speed.
  const stormBudget = { maxEventsPerWindow: 1_000, eventWindowMs: 600_000 };

  async function storm(root: string, feed: LiveFeed, stopWhen: () => boolean) {
    const s = startRenameStorm(root, { from: 'storm-a.txt', to: 'storm-b.txt', pairs: 20_000, maxMs: 20_000 });
    onTestFinished(() => s.stop());
    await waitFor(() => (stopWhen() || s.child.exitCode !== null ? true : undefined), 30_000);
    s.stop();
    await s.done.catch(() => 0);
    return feed.stats();
  }

  it('a rename storm switches the feed off with too_many_events and the events it handles stay within its budget', async () => {
    const repo = createTempRepo({ git: false, files: { 'storm-a.txt': 's\n' } });
    repos.push(repo);
    const { events, feed } = setup(100, stormBudget);
    feed.open(
      { sessionId: 's', runId: 'r', changeId: 'run:r', root: repo.dir },
      { scannedFiles: 1, truncated: false },
      keepAll,
    );
    await watching(feed);
    const stats = await storm(repo.dir, feed, () => events.some((e) => !e.available));
    const off = await waitFor(() => events.find((e) => !e.available));
    expect(off).toMatchObject({ run_id: 'r', available: false, reason: 'too_many_events', touched_count: 0 });
    expect(stats.switchedOff).toBe(1);
    expect(stats.eventsHandled).toBeLessThanOrEqual(stormBudget.maxEventsPerWindow + 1);
    // The watcher is closed: nothing more of the storm reaches the process through it.
    expect(feed.watcherCount()).toBe(0);
    expect(feed.isOpen('s', 'run:r')).toBe(false);
    expect(feed.stats().eventsHandled).toBe(stats.eventsHandled);
  });

  it('control: without a budget the same storm makes the watcher handle far more events than that budget', async () => {
    const repo = createTempRepo({ git: false, files: { 'storm-a.txt': 's\n' } });
    repos.push(repo);
    const { events, feed } = setup(100, { maxEventsPerWindow: Number.POSITIVE_INFINITY });
    feed.open(
      { sessionId: 's', runId: 'r', changeId: 'run:r', root: repo.dir },
      { scannedFiles: 1, truncated: false },
      keepAll,
    );
    await watching(feed);
    const stats = await storm(repo.dir, feed, () => feed.stats().eventsHandled > 3 * stormBudget.maxEventsPerWindow);
    expect(stats.eventsHandled).toBeGreaterThan(3 * stormBudget.maxEventsPerWindow);
    expect(events.some((e) => !e.available)).toBe(false);
    expect(feed.watcherCount()).toBe(1);
  });

  it('a run touching more distinct paths than the feed tracks is switched off with too_many_paths', async () => {
    const repo = createTempRepo({ git: false });
    repos.push(repo);
    const { events, feed } = setup(100, { maxTrackedPaths: 10 });
    feed.open(
      { sessionId: 's', runId: 'r', changeId: 'run:r', root: repo.dir },
      { scannedFiles: 0, truncated: false },
      keepAll,
    );
    await watching(feed);
    for (let i = 0; i < 30; i++) repo.write(`f${i}.txt`, `${i}\n`);
    const off = await waitFor(() => events.find((e) => !e.available));
    expect(off).toMatchObject({ available: false, reason: 'too_many_paths' });
    expect(events.every((e) => e.touched_count <= 10)).toBe(true);
    expect(feed.isOpen('s', 'run:r')).toBe(false);
  });

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
