import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DiffProgressPayload } from '../../shared/index.ts';
import { createTempRepo, type TempRepo } from '../test-support/index.ts';
import { gitFeedIgnore, LiveFeed, type FeedIgnore } from './index.ts';

const repos: TempRepo[] = [];
const feeds: LiveFeed[] = [];
afterEach(async () => {
  while (feeds.length) await feeds.pop()!.closeAll();
  while (repos.length) repos.pop()!.cleanup();
});

const keepAll: FeedIgnore = { skipDir: () => false, keep: async (r) => r };

function setup(maxFiles = 100) {
  const events: DiffProgressPayload[] = [];
  const feed = new LiveFeed({ maxFiles, intervalMs: 100, emit: (p) => events.push(p) });
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

// chokidar reports "ready" asynchronously; give the watcher a moment before touching files.
const settle = () => new Promise((r) => setTimeout(r, 300));

describe('live touched-files feed', () => {
  it('a touched file is reported while the run is open, with an exact count', async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'a\n' } });
    repos.push(repo);
    const { events, feed } = setup();
    const run = { sessionId: 's', runId: 'r', changeId: 'run:r', root: repo.dir };
    expect(feed.open(run, { scannedFiles: 1, truncated: false }, keepAll)).toBe(true);
    await settle();
    repo.write('a.txt', 'changed\n');
    repo.write('src/new.ts', 'x\n');
    const last = await waitFor(() => events.find((e) => e.touched_count === 2));
    expect(last).toMatchObject({ session_id: 's', run_id: 'r', change_id: 'run:r', available: true });
    expect(last.touched.sort()).toEqual(['a.txt', 'src/new.ts']);
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
    await settle();
    repo.write('logs/x.log', 'l\n');
    repo.write('scratch.tmp', 't\n');
    repo.write('keep.txt', 'k2\n');
    const e = await waitFor(() => events.find((x) => x.touched.includes('keep.txt')));
    await new Promise((r) => setTimeout(r, 300));
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
    await settle();
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
    await settle();
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
    await settle();
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
});
