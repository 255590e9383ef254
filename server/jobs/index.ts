import type { CheckpointEngine } from '../checkpoint/index.ts';
import { checkpointTtlJob } from './checkpoint-ttl.ts';
import { liveFeedSweepJob } from './live-feed-sweep.ts';
import { retentionJob } from './retention.ts';
import type { BackgroundJob } from './runner.ts';

export { startJobs, nodeTimers, type BackgroundJob, type JobTimers, type RunningJobs } from './runner.ts';

export interface JobParts {
  engine: Pick<CheckpointEngine, 'sweep'>;
  checkpointTtlMs: number;
  /** The live feed (the server only; an in-process recorder has none). */
  liveFeed: { sweep(): void } | null;
  /** Removes stored changes older than the retention period. */
  sweepOld: () => Promise<number>;
  retentionIntervalMs?: number;
}

/** Every periodic job, in one list: the server and the in-process recorder start and stop these. */
export function backgroundJobs(p: JobParts): BackgroundJob[] {
  return [
    checkpointTtlJob(p.engine, p.checkpointTtlMs),
    ...(p.liveFeed ? [liveFeedSweepJob(p.liveFeed)] : []),
    retentionJob(p.sweepOld, p.retentionIntervalMs),
  ];
}
