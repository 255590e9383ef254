import type { ChangeSummary, Limits, TruncatedReason, WorkspaceKind } from '../../shared/index.ts';
import type { ResolvedWorkspace } from '../workspace/index.ts';
import type { DeltaFile } from '../delta/types.ts';

/**
 * The engine's in-process API, used by the bridge (server/runs) and `run_changes`.
 * A registry holds every live checkpoint in memory, keyed by `session_id + change_id`.
 */

export interface RegistryOptions {
  limits: Readonly<Limits>;
  /** The server's database file: its files are never reported (B15, docs/contract.md section 1). */
  dbPath: string | null;
  /** Clock (ms), injectable for TTL tests. Default Date.now. */
  now?: () => number;
  /** Where a checkpoint or delta that failed on an exception logs its cause. Default stderr. */
  log?: (message: string) => void;
  /**
   * Watch git workspaces (one inotify watch per folder) so that a checkpoint or completion asks git
   * only about the paths that changed since the previous one, verified by a sync cookie; whenever
   * the watcher cannot vouch, the whole tree is listed as without it. Default off here; the
   * server's default is the setting `RUNDIFF_WATCH_CHECKPOINTS`.
   */
  watchCheckpoints?: boolean;
}

export interface StartInput {
  sessionId: string;
  changeId: string;
  /** The run this checkpoint belongs to: a run and its own tool calls never make each other overlapping (B6). */
  runId: string;
  workspace: ResolvedWorkspace;
}

export interface StartResult {
  workspace_kind: WorkspaceKind;
  scanned_files: number;
  truncated: boolean;
  truncated_reasons: TruncatedReason[];
  duration_ms: number;
}

/** A computed change (not yet stored): ChangeSummary's engine part plus the files with patches. */
export interface DeltaResult extends Pick<
  ChangeSummary,
  | 'workspace'
  | 'workspace_kind'
  | 'started_at'
  | 'finished_at'
  | 'changed_count'
  | 'added_count'
  | 'modified_count'
  | 'deleted_count'
  | 'renamed_count'
  | 'binary_count'
  | 'truncated'
  | 'truncated_reasons'
  | 'total_patch_bytes'
  | 'overlapping'
  | 'omitted_count'
> {
  files: DeltaFile[];
}

export interface CheckpointEngine {
  /** Takes the checkpoint; resolves only once it is complete. A repeated key returns the first result. */
  start(input: StartInput): Promise<StartResult>;
  /** Computes the delta and drops the checkpoint; null when there is none (never started, evicted, restarted). */
  complete(sessionId: string, changeId: string): Promise<DeltaResult | null>;
  /**
   * Computes the final delta once and keeps the checkpoint with that result until `drop` (or the
   * TTL): a completion whose result could not be stored is answered again with the same delta.
   * Null when there is no checkpoint.
   */
  completeKept(sessionId: string, changeId: string): Promise<DeltaResult | null>;
  /** The delta so far, keeping the checkpoint (for `run_changes` on an open run); null when none. */
  peek(sessionId: string, changeId: string): Promise<DeltaResult | null>;
  has(sessionId: string, changeId: string): boolean;
  /** Any event of a run refreshes the TTL of the run's checkpoints (run and tool calls). */
  touch(sessionId: string, runId: string): void;
  /** Drops a checkpoint without computing anything. */
  drop(sessionId: string, changeId: string): void;
  /**
   * Drops checkpoints whose run saw no event for `checkpointTtlMs`; returns the dropped keys. The
   * server runs it as a background job (the engine keeps no timer of its own).
   */
  sweep(): { sessionId: string; changeId: string }[];
  /** Bytes of content held by all live checkpoints (for tests and the memory cap). */
  memoryBytes(): number;
  /** Drops every checkpoint and stops the worker threads. */
  close(): Promise<void>;
  /** Scan threads stopped but blocked in a system call: the process cannot exit normally while any remain. */
  stuckWorkers(): number;
}
