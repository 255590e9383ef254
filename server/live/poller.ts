import { DEFAULT_CHECK_DELAY, nextCheckDelayMs, type CheckDelayOptions } from './check-delay.ts';

/** One-shot timers; tests pass a fake clock's. */
export interface OneShotTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const nodeOneShotTimers: OneShotTimers = {
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface PollerOptions {
  /** The run's changed paths so far; null once there is nothing more to follow (the checkpoint is gone). */
  check(): Promise<string[] | null>;
  /** Each successful check, with the pause chosen before the next one (ms). */
  onResult(paths: string[], nextInMs: number): void;
  /** The check answered null: the poller has stopped. */
  onEnd(): void;
  /** `maxFailures` checks in a row failed: the poller has stopped. `err` is the last failure. */
  onFailed(err: unknown): void;
  /** Every failed check (the poller retries after a longer pause). */
  onError(err: unknown): void;
  now(): number;
  timers: OneShotTimers;
  /** How many runs are polling at once (they share the time budget). */
  sharers(): number;
  delay?: Partial<CheckDelayOptions>;
  /** Failed checks in a row before giving up. Default 3. */
  maxFailures?: number;
}

export interface Poller {
  /** No check after this one; resolves once a check still running has ended. */
  stop(): Promise<void>;
  /** The pause chosen after the last check (ms); 0 before the first check ends. */
  intervalMs(): number;
  /** Checks started so far. */
  checks(): number;
  /** True while a check runs or the next one is scheduled. */
  active(): boolean;
}

/**
 * Checks a run's changed paths at once, then again and again, each time after a pause that follows
 * the measured cost of the last check (see `nextCheckDelayMs`). The next check is scheduled only
 * when the previous one has ended, so two never overlap.
 */
export function startPoller(o: PollerOptions): Poller {
  const delay = { ...DEFAULT_CHECK_DELAY, ...o.delay };
  const maxFailures = o.maxFailures ?? 3;
  let stopped = false;
  let timer: unknown = null;
  let inFlight: Promise<unknown> | null = null;
  let interval = 0;
  let checks = 0;
  let failures = 0;

  const schedule = (ms: number) => {
    timer = o.timers.setTimeout(() => {
      timer = null;
      void run();
    }, ms);
  };

  const run = async () => {
    if (stopped) return;
    checks++;
    const startedAt = o.now();
    let paths: string[] | null;
    try {
      const pending = o.check();
      inFlight = pending;
      paths = await pending;
    } catch (err) {
      inFlight = null;
      if (stopped) return;
      failures++;
      o.onError(err);
      if (failures >= maxFailures) {
        stopped = true;
        o.onFailed(err);
        return;
      }
      // Back off: a failing check (a timeout, a busy disk) is not retried at full rate.
      interval = Math.min(delay.maxIntervalMs, Math.max(delay.minIntervalMs, interval) * 2);
      schedule(interval);
      return;
    }
    // Counted while still in flight, so that this poller is one of the sharers.
    const sharers = o.sharers();
    inFlight = null;
    if (stopped) return;
    failures = 0;
    if (paths === null) {
      stopped = true;
      o.onEnd();
      return;
    }
    interval = nextCheckDelayMs(o.now() - startedAt, sharers, delay);
    o.onResult(paths, interval);
    if (!stopped) schedule(interval);
  };

  void run();
  return {
    async stop() {
      stopped = true;
      if (timer !== null) o.timers.clearTimeout(timer);
      timer = null;
      await inFlight?.catch(() => undefined);
    },
    intervalMs: () => interval,
    checks: () => checks,
    active: () => !stopped && (inFlight !== null || timer !== null),
  };
}
