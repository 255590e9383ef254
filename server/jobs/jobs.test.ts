import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveConfig } from '../config.ts';
import { createLiveFeedObserver } from '../live/index.ts';
import { createServer, type RunningServer } from '../main.ts';
import { createFakeClock } from '../test-support/fake-clock.ts';
import { createTempDir, createTempRepo } from '../test-support/temp-repo.ts';
import { resolveWorkspace } from '../workspace/index.ts';
import { startJobs } from './index.ts';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const DAY_MS = 24 * 3600 * 1000;

/** The real server on an ephemeral port, its jobs on `clock`. */
async function serverOn(clock: ReturnType<typeof createFakeClock>): Promise<RunningServer> {
  const dir = createTempDir('rundiff-jobs-');
  const config = resolveConfig(
    {
      port: 0,
      db: path.join(dir, 'rundiff.db'),
      host: '127.0.0.1',
      limits: { checkpointTtlMs: '1000', retentionDays: '30' },
    },
    { HOME: process.env.HOME ?? '/nonexistent' },
  );
  const server = await createServer(config, { now: clock.now, jobTimers: clock.timers, log: () => undefined });
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => server.close());
  return server;
}

const post = async (server: RunningServer, event: object) =>
  (await fetch(`${server.url}/api/bridge/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
  }).then((r) => r.json())) as Record<string, unknown>;

describe('background jobs', () => {
  it('the server runs one named list of jobs, and closing it clears every timer', async () => {
    const clock = createFakeClock();
    const server = await serverOn(clock);
    expect(server.jobs.running()).toEqual(['checkpoint-ttl-sweep', 'live-feed-sweep', 'retention-sweep']);
    expect(clock.liveTimers()).toBe(3);
    await server.close();
    expect(server.jobs.running()).toEqual([]);
    expect(clock.liveTimers()).toBe(0);
  });

  it('on the clock, the TTL job drops a silent run and the retention job removes changes past the retention days', async () => {
    const clock = createFakeClock(Date.UTC(2026, 0, 1));
    const server = await serverOn(clock);
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    cleanups.push(() => repo.cleanup());
    await post(server, { type: 'run.started', session_id: 's', run_id: 'kept', workspace: repo.dir });
    repo.write('a.txt', 'b\n');
    expect(await post(server, { type: 'run.completed', session_id: 's', run_id: 'kept' })).toMatchObject({
      changed_count: 1,
    });
    await post(server, { type: 'run.started', session_id: 's', run_id: 'idle', workspace: repo.dir });
    expect(server.engine.has('s', 'run:idle')).toBe(true);
    clock.advance(999);
    expect(server.engine.has('s', 'run:idle')).toBe(true);
    clock.advance(1);
    expect(server.engine.has('s', 'run:idle')).toBe(false);

    const stored = async () =>
      (
        (await fetch(`${server.url}/api/hermes/sessions/s/workspace-run-changes`).then((r) => r.json())) as {
          changes: { run_id: string }[];
        }
      ).changes.map((c) => c.run_id);
    expect(await stored()).toEqual(['kept']);
    clock.jump(31 * DAY_MS);
    expect(await stored()).toEqual([]);
  });

  it('the live-feed job closes the feed of a run whose checkpoint is gone, and only then', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    cleanups.push(() => repo.cleanup());
    const ws = await resolveWorkspace(repo.dir, { workspaceRoots: null, homeDir: '/nonexistent-home' });
    if (!ws.ok) throw new Error(ws.reason);
    let held = true;
    const opened: string[] = [];
    const live = createLiveFeedObserver({
      maxWatches: 1_000,
      dbPath: null,
      emit: () => undefined,
      hasCheckpoint: () => held,
      log: () => undefined,
    });
    cleanups.push(() => live.close());
    const clock = createFakeClock();
    const jobs = startJobs([{ name: 'live-feed-sweep', intervalMs: 60_000, run: () => live.sweep() }], {
      log: () => undefined,
      timers: clock.timers,
    });
    cleanups.push(() => jobs.stop());
    live.observer.checkpointTaken!({
      sessionId: 's',
      runId: 'r',
      changeId: 'run:r',
      toolCallId: null,
      workspace: ws,
      result: { workspace_kind: 'git', scanned_files: 1, truncated: false, truncated_reasons: [], duration_ms: 0 },
    });
    // The feed opens once the ignore rules are read (a real signal: bounded polling of its state).
    await vi.waitFor(() => expect(live.feed.isOpen('s', 'run:r')).toBe(true), { timeout: 20_000, interval: 5 });
    opened.push(String(live.feed.isOpen('s', 'run:r')));
    clock.advance(60_000);
    opened.push(String(live.feed.isOpen('s', 'run:r')));
    held = false;
    clock.advance(60_000);
    opened.push(String(live.feed.isOpen('s', 'run:r')));
    expect(opened).toEqual(['true', 'true', 'false']);
  });
});

describe('job runner', () => {
  it('runs a job at start when asked and on each interval; a failing job is logged and keeps running', () => {
    const clock = createFakeClock();
    const log: string[] = [];
    const runs: string[] = [];
    const jobs = startJobs(
      [
        { name: 'a', intervalMs: 10, runAtStart: true, run: () => runs.push('a') },
        {
          name: 'b',
          intervalMs: 25,
          run: () => {
            runs.push('b');
            throw new Error('boom');
          },
        },
      ],
      { log: (m) => log.push(m), timers: clock.timers },
    );
    cleanups.push(() => jobs.stop());
    expect(runs).toEqual(['a']);
    clock.advance(50);
    // At 50 both are due: the earlier-listed job runs first.
    expect(runs).toEqual(['a', 'a', 'a', 'b', 'a', 'a', 'a', 'b']);
    expect(log).toEqual(['background job b failed: boom', 'background job b failed: boom']);
    jobs.stop();
    clock.advance(100);
    expect(runs).toHaveLength(8);
    expect(jobs.running()).toEqual([]);
    expect(clock.liveTimers()).toBe(0);
  });

  it('does not start a job again while its previous run is still in flight', async () => {
    const clock = createFakeClock();
    let release!: () => void;
    let started = 0;
    const jobs = startJobs(
      [
        {
          name: 'slow',
          intervalMs: 10,
          run: () => {
            started++;
            return new Promise<void>((resolve) => (release = resolve));
          },
        },
      ],
      { log: () => undefined, timers: clock.timers },
    );
    cleanups.push(() => jobs.stop());
    clock.advance(30);
    expect(started).toBe(1);
    release();
    await new Promise((r) => setImmediate(r));
    clock.advance(10);
    expect(started).toBe(2);
  });

  it('refuses two jobs of the same name', () => {
    const job = { name: 'x', intervalMs: 1, run: () => undefined };
    expect(() => startJobs([job, job], { log: () => undefined })).toThrow(/unique/);
  });
});
