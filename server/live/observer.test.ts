import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { io as connect, type Socket } from 'socket.io-client';
import type { DiffProgressPayload } from '../../shared/index.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo, startRenameStorm, type TempRepo } from '../test-support/index.ts';
import type { FeedBudget } from './index.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup(
  limits: Record<string, number> = {},
  liveFeedBudget?: FeedBudget,
): Promise<{ t: TestServer; repo: TempRepo; client: Socket; progress: DiffProgressPayload[] }> {
  const t = await startTestServer({ limits, ...(liveFeedBudget ? { liveFeedBudget } : {}) });
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'a.txt': 'a\n', '.gitignore': 'build/\n', 'storm-a.txt': 's\n' } });
  cleanups.push(() => repo.cleanup());
  const client = connect(t.server.url, { transports: ['websocket'], extraHeaders: {} });
  cleanups.push(() => void client.close());
  const progress: DiffProgressPayload[] = [];
  client.on('workspace.diff.progress', (p) => progress.push(p));
  await new Promise<void>((resolve) => client.on('connect', () => resolve()));
  await client.emitWithAck('session.subscribe', { session_id: 's1' });
  return { t, repo, client, progress };
}

async function waitFor<T>(fn: () => T | undefined, ms = 8_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('live feed over the bridge and socket', () => {
  it('a touched file reaches a session subscriber before the run completes; ignored paths do not; the watcher closes with the run', async () => {
    const { t, repo, progress } = await setup();
    await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
    const start = await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    expect(start.body.tracking).toBe(true);
    // Edits made at once, before the new watcher is ready, are still reported.
    repo.write('build/out.js', 'x\n');
    repo.write('a.txt', 'changed\n');
    const seen = await waitFor(() => progress.find((p) => p.touched.includes('a.txt')));
    expect(seen).toMatchObject({ session_id: 's1', run_id: 'r1', change_id: 'run:r1', available: true });
    expect(progress.flatMap((p) => p.touched)).not.toContain('build/out.js');
    const done = await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    expect(done.body.changed_count).toBe(1);
    // No watcher survives its run: later writes produce no progress. The signal that it would have
    // arrived: a later run's second progress event, throttled to come at least one interval after its
    // first, so after anything the first run's watcher would have sent for the earlier write.
    const count = progress.length;
    repo.write('a.txt', 'again\n');
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r2' });
    repo.write('b.txt', 'b\n');
    await waitFor(() => progress.find((p) => p.run_id === 'r2' && p.touched.includes('b.txt')));
    repo.write('c.txt', 'c\n');
    await waitFor(() => progress.find((p) => p.run_id === 'r2' && p.touched.includes('c.txt')));
    expect(progress.slice(count).filter((p) => p.run_id === 'r1')).toEqual([]);
  });

  it(
    'a git workspace of 6,000 files (over the old 5,000-file cut-off) shows touched paths live, watched one folder at a time',
    { tags: ['stress'] },
    async () => {
      const { t, repo, progress } = await setup();
      for (let d = 0; d < 30; d++) {
        const dir = path.join(repo.dir, `pkg${d}`);
        fs.mkdirSync(dir);
        for (let f = 0; f < 200; f++) fs.writeFileSync(path.join(dir, `f${f}.ts`), 'x\n');
      }
      // Left uncommitted: the checkpoint takes untracked files as they are, and a commit of 6,000
      // files would only make the test slower.
      await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
      await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
      repo.write('pkg3/f7.ts', 'changed\n');
      repo.write('pkg29/new.ts', 'new\n');
      const seen = await waitFor(() =>
        progress.find((p) => p.touched.includes('pkg3/f7.ts') && p.touched.includes('pkg29/new.ts')),
      );
      expect(seen).toMatchObject({ run_id: 'r1', available: true, mode: 'watch', touched_count: 2 });
      const done = await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
      expect(done.body.changed_count).toBe(2);
    },
  );

  it('past RUNDIFF_LIVE_FEED_MAX_WATCHES the run is checked periodically: the engine lists its changed paths, ignored ones left out', async () => {
    const { t, repo, progress } = await setup({ liveFeedMaxWatches: 1 });
    repo.write('src/keep.ts', 'k\n');
    repo.commit('a folder');
    await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    repo.write('src/keep.ts', 'changed\n');
    repo.write('build/out.js', 'x\n');
    repo.write('a.txt', 'changed\n');
    const seen = await waitFor(() => progress.find((p) => p.touched_count === 2));
    expect(seen).toMatchObject({ run_id: 'r1', available: true, mode: 'poll', reason: 'watch_budget' });
    expect(seen.touched).toEqual(['a.txt', 'src/keep.ts']);
    expect(seen.check_interval_ms).toBeGreaterThanOrEqual(1_000);
    const done = await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    expect(done.body.changed_count).toBe(2);
    // The periodic check ended with the run.
    expect(t.server.liveFeed.handles()).toEqual({
      watchers: 0,
      folderWatches: 0,
      pollers: 0,
      throttleTimers: 0,
      runs: 0,
    });
  });

  it(
    'a rename storm during an open run: health answers, the feed goes on with periodic checks (too_many_events), and the completion is stored with the right delta',
    { tags: ['stress'] },
    async () => {
      // One window longer than the test: the switch-off depends on the number of events, not on speed.
      // The pause between checks follows what a check cost (nine times it, doubled after a failed
      // one), and checks made during the storm on a loaded machine cost seconds: a short ceiling
      // keeps this test about the feed going on, not about its pace (check-delay.test.ts has that).
      const { t, repo, progress } = await setup(
        {},
        { maxEventsPerWindow: 1_000, eventWindowMs: 600_000, checkDelay: { maxIntervalMs: 2_000 } },
      );
      await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
      expect((await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' })).body.tracking).toBe(true);
      repo.write('a.txt', 'changed\n');
      await waitFor(() => progress.find((p) => p.available && p.touched.includes('a.txt')));

      const storm = startRenameStorm(repo.dir, {
        from: 'storm-a.txt',
        to: 'storm-b.txt',
        pairs: 20_000,
        maxMs: 20_000,
      });
      cleanups.push(() => storm.stop());
      let stormOver = false;
      void storm.done.finally(() => (stormOver = true)).catch(() => undefined);
      const health: number[] = [];
      while (!stormOver && !progress.some((p) => p.mode === 'poll')) health.push((await t.get('/api/health')).status);
      const polled = await waitFor(() => progress.find((p) => p.mode === 'poll'));
      expect(polled).toMatchObject({ run_id: 'r1', available: true, reason: 'too_many_events' });
      const renames = await storm.done;
      expect(renames % 2).toBe(0); // the storm file is back under its first name
      expect(health.length).toBeGreaterThan(0);
      expect(health.every((s) => s === 200)).toBe(true);

      repo.write('b.txt', 'b\n');
      // Not dark after the storm: the periodic check reports the new file.
      await waitFor(() => progress.find((p) => p.mode === 'poll' && p.touched.includes('b.txt')));
      expect(progress.some((p) => !p.available)).toBe(false);
      const done = await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ tracking: true, changed_count: 2 });
      expect(done.body.files.map((f: { path: string; change_type: string }) => [f.path, f.change_type]).sort()).toEqual(
        [
          ['a.txt', 'modified'],
          ['b.txt', 'added'],
        ],
      );
      const detail = await t.get('/api/hermes/sessions/s1');
      expect(detail.body.runs[0]).toMatchObject({ run_id: 'r1', status: 'completed', tracking: true });
      expect(detail.body.changes).toHaveLength(1);
    },
  );
});
