import { ttlSweepIntervalMs, type CheckpointEngine } from '../checkpoint/index.ts';
import type { BackgroundJob } from './runner.ts';

/** Drops checkpoints whose run has been silent for the TTL (the engine decides which). */
export function checkpointTtlJob(engine: Pick<CheckpointEngine, 'sweep'>, ttlMs: number): BackgroundJob {
  return { name: 'checkpoint-ttl-sweep', intervalMs: ttlSweepIntervalMs(ttlMs), run: () => engine.sweep() };
}
