import type { Limits, TruncatedReason, WorkspaceKind } from '../../shared/index.ts';
import type { CandidateChange } from '../delta/types.ts';
import type { RepoInfo } from '../git/index.ts';
import type { PathKey } from '../paths/index.ts';
import type { Scanner } from '../workspace/index.ts';
import type { Checkpoint } from './model.ts';
import type { Watches, WatchesOptions } from './watch/index.ts';

/**
 * The one interface a checkpoint strategy implements: `capture` records what a workspace looks like
 * at a start, `collect` finds what changed since, with both sides' bytes. Each strategy lives in its
 * own folder and is listed once in strategies.ts; the engine never asks which one took a checkpoint.
 */

/** What a strategy is built with, once per engine. */
export interface StrategyDeps {
  limits: Readonly<Limits>;
  scanner: Scanner;
  /** Kill deadline of one git call (ignores, index, blobs, attributes). */
  gitTimeoutMs: number;
  /** Deadline of git's listing of a git workspace (status, config): it grows with the repository. */
  listingTimeoutMs: number;
  now(): number;
  /** The checkpoint watchers' settings; null: off. */
  watch: CheckpointWatchOptions | null;
  /**
   * The engine's checkpoint watchers (one per workspace folder, one budget), shared by the
   * strategies, so that a checkpoint lists only what changed since the last one; null: off.
   */
  watches: Watches | null;
}

/** The checkpoint watchers' settings (one per workspace folder, shared budget). */
export interface CheckpointWatchOptions extends WatchesOptions {
  /** Told how each listing was made (tests, benchmarks). */
  told?: (root: string, how: ListingHow) => void;
}

/** How a listing was made: from the watcher's paths (how many), or whole and why. */
export type ListingHow = { watched: number } | { whole: string };

/** One start: the workspace, and what the engine lends the capture. */
export interface CaptureRequest {
  root: string;
  kind: WorkspaceKind;
  /** The repository the workspace lies in (git workspaces). */
  repo: RepoInfo | null;
  /** The server's own files under the root (never reported). */
  ownFiles: PathKey[];
  /** Asks the shared memory cap for up to `wanted` bytes of snapshot room; returns the grant. */
  reserveMemory(wanted: number): number;
  /** A walk or read that failed on an exception (answered `degraded`): the engine logs it with context. */
  reportFailure(what: string, err: unknown): void;
  /** The strategy cannot take this workspace now: `what` it lacks, why, and what happens instead. */
  reportFallback(what: string, err: unknown, outcome: string): void;
  /**
   * The checkpoints of this same folder the engine holds now, newest first (taken by any strategy:
   * each may reuse only what it recorded itself). Their contents stay valid while they are held.
   */
  held(): readonly Taken[];
}

/**
 * A capture's answer: the checkpoint; `passed` (not this strategy's workspace, or not now: the next
 * strategy is asked); or `failed` (nothing can be claimed: the checkpoint is empty and says why).
 */
export type Capture<State> = { taken: Checkpoint<State> } | { passed: true } | { failed: TruncatedReason };

/** One completion (or progress peek): what the engine lends the collection. */
export interface CollectRequest {
  ownFiles: PathKey[];
  reportFailure(what: string, err: unknown): void;
}

export interface CollectedChanges {
  /** The changed paths with both sides (start, now); the delta classifies them. */
  changes: CandidateChange[];
  reasons: TruncatedReason[];
}

export interface CheckpointStrategy<State = unknown> {
  /** Its folder's name (logs, docs). */
  readonly name: string;
  capture(req: CaptureRequest): Promise<Capture<State>>;
  collect(cp: Checkpoint<State>, req: CollectRequest): Promise<CollectedChanges>;
  /** The `scanned_files` figure of a start. */
  scannedFiles(cp: Checkpoint<State>): number;
  /** Forgets what it keeps between checkpoints (its caches): the engine is closing. */
  clear(): void;
}

/** Builds a strategy for one engine. */
export type StrategyFactory = (deps: StrategyDeps) => CheckpointStrategy;

/** A checkpoint and the strategy that took it, which also completes it. */
export interface Taken {
  checkpoint: Checkpoint;
  strategy: CheckpointStrategy;
}
