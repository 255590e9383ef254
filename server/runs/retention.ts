/** Runs the age sweep now and then every `intervalMs` (default hourly) on a timer that never keeps the process alive. */
export interface Retention {
  stop(): void;
}

export function startRetention(
  sweep: () => number,
  opts: { intervalMs?: number; log?: (m: string) => void } = {},
): Retention {
  const run = () => {
    try {
      sweep();
    } catch (err) {
      opts.log?.(`retention sweep failed: ${(err as Error).message}`);
    }
  };
  run();
  const timer = setInterval(run, opts.intervalMs ?? 60 * 60 * 1000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
