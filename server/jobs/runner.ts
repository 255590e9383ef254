/**
 * Background work as one named list: the server starts every job after it listens and stops them
 * all on close, so no timer is left behind in some module. A job's failure is logged and its next
 * run still happens; a run still in flight is not started a second time.
 */

export interface BackgroundJob {
  /** Unique within a list (logs, tests). */
  name: string;
  /** Time between two runs (ms). */
  intervalMs: number;
  /** Also run once when the jobs start. */
  runAtStart?: boolean;
  run(): unknown;
}

/** The timer functions the runner uses; tests pass a fake clock. */
export interface JobTimers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export interface RunningJobs {
  /** Names of the jobs whose timer is live, in list order. */
  running(): string[];
  /** Clears every timer (idempotent). */
  stop(): void;
}

/** Node's timers, never keeping the process alive on their own. */
export const nodeTimers: JobTimers = {
  setInterval(fn, ms) {
    const t = setInterval(fn, ms);
    t.unref();
    return t;
  },
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
};

export function startJobs(
  jobs: readonly BackgroundJob[],
  opts: { log: (message: string) => void; timers?: JobTimers },
): RunningJobs {
  const names = new Set(jobs.map((j) => j.name));
  if (names.size !== jobs.length) throw new Error('background job names must be unique');
  const timers = opts.timers ?? nodeTimers;
  const live = new Map<string, unknown>();

  const tick = (job: BackgroundJob, inFlight: { now: boolean }) => {
    if (inFlight.now) return;
    const failed = (err: unknown) =>
      opts.log(`background job ${job.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    try {
      const out = job.run();
      if (out instanceof Promise) {
        inFlight.now = true;
        out.catch(failed).finally(() => (inFlight.now = false));
      }
    } catch (err) {
      failed(err);
    }
  };

  for (const job of jobs) {
    const inFlight = { now: false };
    if (job.runAtStart) tick(job, inFlight);
    live.set(
      job.name,
      timers.setInterval(() => tick(job, inFlight), job.intervalMs),
    );
  }

  return {
    running: () => [...live.keys()],
    stop() {
      for (const handle of live.values()) timers.clearInterval(handle);
      live.clear();
    },
  };
}
