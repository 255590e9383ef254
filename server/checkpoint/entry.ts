import type { Taken } from './strategy.ts';
import type { DeltaResult, StartResult } from './types.ts';

/** One live checkpoint in the registry, with the bookkeeping memory, TTL and overlap rules read. */
export interface Entry {
  sessionId: string;
  changeId: string;
  /** Session + run id: a run and its own tool calls share it (they never overlap each other). */
  runKey: string;
  root: string;
  started: Promise<StartResult>;
  /** The checkpoint and the strategy that took it, once taken. */
  taken: Taken | null;
  lastEventAt: number;
  overlapping: boolean;
  /**
   * Computations in flight. A busy checkpoint is never evicted for memory; the TTL sweep spares
   * only one whose completion is in flight (a progress peek holds its own reference, so expiry
   * need not wait for it).
   */
  busy: number;
  completing: Promise<DeltaResult | null> | null;
  memoryBytes: number;
}

/** The registry key of a checkpoint. */
export const keyOf = (sessionId: string, changeId: string): string => `${sessionId}\0${changeId}`;

/** The key of the run a checkpoint belongs to. */
export const runKeyOf = (sessionId: string, runId: string): string => `${sessionId}\0${runId}`;
