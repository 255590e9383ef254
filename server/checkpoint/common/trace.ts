import { performance } from 'node:perf_hooks';

/**
 * Timing spans for profiling the engine: set RUNDIFF_TRACE_ENGINE=1 and each step of a checkpoint
 * or completion writes one line to stderr (`engine <step> <ms>`). Off, a span costs one call.
 */
const enabled = process.env.RUNDIFF_TRACE_ENGINE === '1';

export function span(): (step: string) => void {
  if (!enabled) return () => undefined;
  const t0 = performance.now();
  return (step) => process.stderr.write(`engine ${step} ${(performance.now() - t0).toFixed(1)}\n`);
}

/** Times a promise's settling under `step`. */
export function traced<T>(step: string, p: Promise<T>): Promise<T> {
  if (!enabled) return p;
  const done = span();
  return p.finally(() => done(step));
}

/** A one-off note (which way a step went). */
export function mark(note: string): void {
  if (enabled) process.stderr.write(`engine ${note}\n`);
}
