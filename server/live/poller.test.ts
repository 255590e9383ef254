import { afterEach, describe, expect, it } from 'vitest';
import { createFakeClock, type FakeClock } from '../test-support/fake-clock.ts';
import { startPoller, type Poller, type PollerOptions } from './poller.ts';

const pollers: Poller[] = [];
afterEach(async () => {
  while (pollers.length) await pollers.pop()!.stop();
});

/** Lets the poller's awaited check settle (promise callbacks only; no time passes). */
const settle = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

function setup(clock: FakeClock, check: PollerOptions['check'], more: Partial<PollerOptions> = {}) {
  const results: { paths: string[]; nextInMs: number; at: number }[] = [];
  const seen = { ended: 0, failed: 0, errors: 0 };
  const p = startPoller({
    check,
    onResult: (paths, nextInMs) => results.push({ paths, nextInMs, at: clock.now() }),
    onEnd: () => seen.ended++,
    onFailed: () => seen.failed++,
    onError: () => seen.errors++,
    now: clock.now,
    timers: clock.timers,
    sharers: () => 1,
    ...more,
  });
  pollers.push(p);
  return { p, results, seen };
}

describe('periodic check of a run', () => {
  it('checks at once, then after a pause that follows the measured cost of each check', async () => {
    const clock = createFakeClock();
    const costs = [50, 500, 2_000];
    let n = 0;
    const { p, results } = setup(clock, async () => {
      clock.advance(costs[Math.min(n, costs.length - 1)]!); // the check itself takes this long
      return [`f${n++}`];
    });
    await settle();
    expect(results.map((r) => [r.paths, r.nextInMs])).toEqual([[['f0'], 1_000]]);
    clock.advance(999);
    await settle();
    expect(p.checks()).toBe(1);
    clock.advance(1);
    await settle();
    expect(results.map((r) => r.nextInMs)).toEqual([1_000, 4_500]);
    clock.advance(4_500);
    await settle();
    expect(results.map((r) => r.nextInMs)).toEqual([1_000, 4_500, 18_000]);
    expect(p.intervalMs()).toBe(18_000);
  });

  it('never starts a check while the previous one runs, however long it takes', async () => {
    const clock = createFakeClock();
    let release: (paths: string[]) => void = () => {};
    let started = 0;
    const { p, results } = setup(clock, () => {
      started++;
      return new Promise<string[]>((resolve) => (release = resolve));
    });
    clock.advance(120_000);
    await settle();
    expect(started).toBe(1);
    expect(clock.liveTimers()).toBe(0);
    clock.advance(3_000);
    release(['a.txt']);
    await settle();
    // The check took 123 s: the pause is capped, and only now is the next one scheduled.
    expect(results).toEqual([{ paths: ['a.txt'], nextInMs: 60_000, at: clock.now() }]);
    expect(clock.liveTimers()).toBe(1);
    expect(p.active()).toBe(true);
  });

  it('stop leaves no timer and no later check', async () => {
    const clock = createFakeClock();
    let started = 0;
    const { p } = setup(clock, async () => {
      started++;
      return [];
    });
    await settle();
    expect(clock.liveTimers()).toBe(1);
    // Its timer goes at once; the promise is for a check still running (none here).
    void p.stop();
    expect(clock.liveTimers()).toBe(0);
    expect(p.active()).toBe(false);
    clock.advance(600_000);
    await settle();
    expect(started).toBe(1);
  });

  it('a check answering null (the checkpoint is gone) ends the poller', async () => {
    const clock = createFakeClock();
    const { p, seen } = setup(clock, async () => null);
    await settle();
    expect(seen.ended).toBe(1);
    expect(p.active()).toBe(false);
    expect(clock.liveTimers()).toBe(0);
  });

  it('failing checks back off, and the third failure in a row gives up', async () => {
    const clock = createFakeClock();
    let started = 0;
    const { p, seen } = setup(clock, async () => {
      started++;
      throw new Error('disk busy');
    });
    await settle();
    expect(seen).toEqual({ ended: 0, failed: 0, errors: 1 });
    clock.advance(1_999);
    await settle();
    expect(started).toBe(1); // the retry waits twice the shortest pause
    clock.advance(1);
    await settle();
    expect(started).toBe(2);
    clock.advance(4_000);
    await settle();
    expect(seen).toEqual({ ended: 0, failed: 1, errors: 3 });
    expect(p.active()).toBe(false);
    expect(clock.liveTimers()).toBe(0);
  });

  it('control: a check that fails once and then succeeds goes on', async () => {
    const clock = createFakeClock();
    let n = 0;
    const { p, seen, results } = setup(clock, async () => {
      if (n++ === 0) throw new Error('once');
      return ['x'];
    });
    await settle();
    clock.advance(2_000);
    await settle();
    expect(seen.failed).toBe(0);
    expect(results).toHaveLength(1);
    expect(p.active()).toBe(true);
  });
});
