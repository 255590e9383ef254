import type { TruncatedReason, WorkspaceKind } from '../../shared/index.ts';
import type { PathKey } from '../paths/index.ts';

/**
 * The checkpoint as data: what every strategy records and the engine keeps until completion.
 * Types and constants only; it imports no strategy and holds no logic.
 */

/** How a checkpointed file's start content can be recovered at completion. */
export const ORIGIN_NONE = 0; // nothing: a changed stat is reported `no_snapshot`
export const ORIGIN_BLOB = 1; // clean tracked file: its index blob (`oids` slot), read with cat-file later
export const ORIGIN_SNAPSHOT = 2; // bytes kept in `block`
export const ORIGIN_HASH = 3; // only the blob id of its bytes (binary, too large, or over the memory cap)

/** Why a file has no bytes at the checkpoint (ORIGIN_HASH / ORIGIN_NONE). */
export const LACK_NONE = 0;
export const LACK_TOO_LARGE = 1;
export const LACK_MEMORY_CAP = 2;
/** It was there but could not be read (permission, not a regular file, outside the root). */
export const LACK_UNREADABLE = 3;

/**
 * One scanned file per index, column by column: a clean 20,000-file git checkpoint is a few
 * typed arrays and one string per path, with no content at all (B19).
 */
export interface FileTable {
  paths: PathKey[];
  size: Float64Array;
  mtimeMs: Float64Array;
  ctimeMs: Float64Array;
  ino: Float64Array;
  /** MODE_FILE / MODE_EXEC / MODE_LINK. */
  mode: Uint8Array;
  origin: Uint8Array;
  lack: Uint8Array;
  /** Index into the checkpoint's git areas (for ORIGIN_BLOB). */
  area: Uint8Array;
  /** 20-byte blob ids (ORIGIN_BLOB, ORIGIN_HASH). */
  oids: Uint8Array;
  snapOffset: Int32Array;
  snapLength: Int32Array;
  /** 1 = NUL found in its first 8,000 bytes at the checkpoint. */
  binary: Uint8Array;
  /** 1 = its mtime was not safely older than the checkpoint: compared by content even if its stat is unchanged (B3). */
  racy: Uint8Array;
}

/** A repository whose index and ignore rules apply to the paths under `prefix` ('' or `dir/`). */
export interface GitArea {
  prefix: PathKey;
  /** Absolute folder git runs in (the workspace root, or a nested repository's top level). */
  cwd: string;
}

/**
 * Which paths a scan can vouch for. A complete scan covers everything it did not prune; a cut scan
 * (file or time limit) covers a path only when the folder holding it was listed, or when the
 * nearest listed ancestor showed that the path's folder did not exist. A path a scan does not
 * cover is never reported as added or deleted (B17, B18).
 */
export interface Coverage {
  complete: boolean;
  /** Folders whose files were all recorded (only needed when not complete). */
  listed: Set<PathKey>;
  /** Folders met, entered or not. */
  seen: Set<PathKey>;
  /** Folders deliberately not entered (ignored, nested repositories handled elsewhere excluded). */
  pruned: Set<PathKey>;
}

export interface IgnoreState {
  pruneDirs: PathKey[];
  skipFiles: PathKey[];
}

export interface Checkpoint<State = unknown> {
  root: string;
  kind: WorkspaceKind;
  /** The scan runs git-style (git decides ignores) or with the file-system rules (non-git, or git unusable). */
  scanMode: 'git' | 'filesystem';
  /** Wall-clock time the scan began (real clock: file mtimes are compared with it). */
  scanStartedAtMs: number;
  /** Injected clock at start (reported as `started_at`). */
  startedAt: number;
  files: FileTable;
  block: Buffer;
  areas: GitArea[];
  coverage: Coverage;
  /** Ignore decisions at the checkpoint, reused at completion when git cannot answer. */
  ignore: IgnoreState;
  /** File-system rules (the walk): the root `.gitignore` the checkpoint applied, if any. */
  gitignoreText?: string | null;
  reasons: TruncatedReason[];
  /** Bytes of content held (snapshots). */
  memoryBytes: number;
  durationMs: number;
  /**
   * What the strategy that took the checkpoint keeps for its completion, opaque to the engine:
   * git's listing at the start (git-status; then `files` holds only the paths git could not vouch
   * for), nothing (the walk).
   */
  state: State;
}

/** Files whose mtime (or ctime) is within this margin of the checkpoint are racy (B3): covers coarse timestamps. */
export const RACY_MARGIN_MS = 2_000;
/** Bytes read for content hashes of files over the snapshot size, per checkpoint (B19's "stated read budget"). */
export const HASH_READ_BUDGET_BYTES = 256 * 1024 * 1024;
/** Larger sides are not read for diffing at completion (reported `too_large`); still compared by hash. */
export const MAX_DIFF_READ_BYTES = 32 * 1024 * 1024;
