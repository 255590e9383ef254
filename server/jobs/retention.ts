import type { BackgroundJob } from './runner.ts';

const HOURLY_MS = 60 * 60 * 1000;

/** The age sweep of stored changes: once at start, then every `intervalMs` (default hourly). */
export function retentionJob(sweepOld: () => Promise<number>, intervalMs = HOURLY_MS): BackgroundJob {
  return { name: 'retention-sweep', intervalMs, runAtStart: true, run: sweepOld };
}
