/**
 * Tests only: a clock that moves when a test says so, with interval timers driven by it (the
 * shape of the background jobs' `JobTimers`). Nothing here waits on real time.
 */
export interface FakeClock {
  now(): number;
  timers: {
    setInterval(fn: () => void, ms: number): unknown;
    clearInterval(handle: unknown): void;
    /** One-shot: fires once when the clock reaches it, then is gone. */
    setTimeout(fn: () => void, ms: number): unknown;
    clearTimeout(handle: unknown): void;
  };
  /** Moves the clock by `ms`, firing every interval that falls due, in time order. */
  advance(ms: number): void;
  /** Moves the clock by `ms` with every timer frozen (a suspended process): each overdue timer then fires once. */
  jump(ms: number): void;
  /** Timers set and not cleared (one-shot ones until they fire). */
  liveTimers(): number;
}

export function createFakeClock(start = 1_000_000): FakeClock {
  let t = start;
  let nextId = 1;
  const live = new Map<number, { fn: () => void; ms: number; nextAt: number; once: boolean }>();
  const advance = (ms: number) => {
    const target = t + ms;
    for (;;) {
      let due: { id: number; nextAt: number } | null = null;
      for (const [id, timer] of live)
        if (timer.nextAt <= target && (!due || timer.nextAt < due.nextAt)) due = { id, nextAt: timer.nextAt };
      if (!due) break;
      const timer = live.get(due.id)!;
      t = Math.max(t, timer.nextAt);
      timer.nextAt += Math.max(1, timer.ms);
      if (timer.once) live.delete(due.id);
      timer.fn();
    }
    // A timer's callback may move the clock itself (a task that takes time): never back.
    t = Math.max(t, target);
  };
  return {
    now: () => t,
    timers: {
      setInterval(fn, ms) {
        const id = nextId++;
        live.set(id, { fn, ms, nextAt: t + Math.max(1, ms), once: false });
        return id;
      },
      clearInterval: (handle) => void live.delete(handle as number),
      setTimeout(fn, ms) {
        const id = nextId++;
        live.set(id, { fn, ms, nextAt: t + Math.max(0, ms), once: true });
        return id;
      },
      clearTimeout: (handle) => void live.delete(handle as number),
    },
    advance,
    jump(ms) {
      t += ms;
      for (const timer of live.values()) timer.nextAt = Math.min(timer.nextAt, t);
      advance(0);
    },
    liveTimers: () => live.size,
  };
}
