import type { ChangeType, Limits, OmittedReason, TruncatedReason } from '../../shared/index.ts';
import type { PathKey } from '../paths/index.ts';

/**
 * The pure delta's input and output. The checkpoint module decides WHICH files changed (by content)
 * and hands each one over with both sides' bytes; `computeDelta` classifies, pairs renames, counts
 * lines exactly like `git diff --numstat`, formats git-style patches and applies the bounds.
 */

/** One side (start or end) of a changed path. */
export interface FileSide {
  /** The bytes, or null when they are unavailable (no snapshot was possible: too large, memory cap). */
  bytes: Buffer | null;
  /**
   * Why `bytes` is null: `too_large` (over the snapshot cap), `no_snapshot` (memory cap), or
   * `unreadable` (the file is there but could not be read: such a side is never taken for absent).
   */
  unavailable?: 'too_large' | 'no_snapshot' | 'unreadable';
  /** Size in bytes (known even when the bytes are not). */
  size: number;
  /** git-style octal mode: `100644`, `100755`, `120000` (symlink: bytes = target text), `160000` (submodule). */
  mode: string;
  /** Binary by attribute (`binary` / `-diff`); content sniffing (NUL in the first 8,000 bytes) is done by delta. */
  binaryAttr?: boolean;
  /** Content identity when known (git blob id or sha1 of bytes): lets rename pairing match without bytes. */
  oid?: string;
}

/** A path whose content or mode differs between the checkpoint and now. Never equal sides. */
export interface CandidateChange {
  path: PathKey;
  /** null = the path did not exist at the checkpoint (added). */
  before: FileSide | null;
  /** null = the path does not exist now (deleted). */
  after: FileSide | null;
}

/**
 * A slow but exact line diff, used when jsdiff gives up within the per-file budget (e.g. git).
 * `hunks` from the first `@@` line on: a string is UTF-8 text, a Buffer raw bytes.
 */
export type FallbackDiff = (
  before: Buffer,
  after: Buffer,
  timeoutMs: number,
) => Promise<{ additions: number; deletions: number; hunks: string | Buffer } | null>;

/** One deleted or added path offered to rename detection. */
export interface RenameSide {
  path: PathKey;
  mode: string;
  /** null = content unavailable: only an identical `oid` can still pair it. */
  bytes: Buffer | null;
  oid?: string;
  binaryAttr?: boolean;
}

/** A deleted path paired with an added one, as `git diff -M` pairs them. */
export interface RenamePair {
  from: PathKey;
  to: PathKey;
  /** git's similarity index (percent, 0-100); 100 = identical content. */
  similarity: number;
}

export interface RenameResult {
  pairs: RenamePair[];
  /** Set when the detector could not run as git would (pairing then falls back to exact content matches). */
  degraded?: 'git_timeout' | 'degraded';
}

/**
 * Pairs deleted and added paths exactly like `git diff -M` (exact renames first, then git's 50%
 * similarity, git's tie-breaks and rename limit). Must not throw; a failure is `degraded`.
 */
export type RenameDetector = (deleted: RenameSide[], added: RenameSide[], timeoutMs: number) => Promise<RenameResult>;

/** A line diff of two text contents, as `git diff --numstat` and `git diff -U3` give it. */
export interface LineDiff {
  additions: number;
  deletions: number;
  /** The hunks (from the first `@@` line to the end), raw bytes; empty when the contents are equal. */
  hunks: Buffer;
}

/**
 * Diffs many before/after pairs in one go (e.g. one git process). Entry i answers pair i, or null
 * when that pair could not be diffed within the budget; the caller then tries other engines.
 * Must not throw.
 */
export type BatchDiff = (
  pairs: ReadonlyArray<{ before: Buffer; after: Buffer }>,
  timeoutMsPerFile: number,
) => Promise<Array<LineDiff | null>>;

export interface DeltaInput {
  changes: CandidateChange[];
  limits: Pick<Limits, 'maxChangedFiles' | 'maxFilePatchBytes' | 'maxRunPatchBytes' | 'diffTimeoutMs'>;
  /** Per-file exact engine, tried when the batch engine is absent or failed and jsdiff gives up. */
  fallbackDiff?: FallbackDiff;
  /** Preferred engine for line counts and hunks: exact `git diff` semantics for every row in one call. */
  batchDiff?: BatchDiff;
  /** git's rename pairing; without it only identical contents pair (a documented approximation). */
  renameDetector?: RenameDetector;
  /**
   * true: every hunk comes from `batchDiff` (byte-identical to git's own text). Default false:
   * files whose counts jsdiff provably shares with git are diffed in process (no process spawn),
   * with hunks that may be aligned differently but apply the same.
   */
  exactHunks?: boolean;
  /**
   * true: a binary file whose sides' bytes are at hand gets git's binary patch (`GIT binary patch`,
   * full `index` ids) as its patch, for a patch that is applied rather than read. Default false: a
   * binary change has no patch (`omitted_reason: 'binary'`).
   */
  binaryPatches?: boolean;
}

/** One changed file as stored (FileSummary without `id`, plus the bounded patch). */
export interface DeltaFile {
  path: string;
  old_path: string | null;
  path_base64?: string;
  old_path_base64?: string;
  /** Raw keys, for sorting and for the whole-run patch. */
  path_key: PathKey;
  old_path_key: PathKey | null;
  change_type: ChangeType;
  additions: number;
  deletions: number;
  binary: boolean;
  truncated: boolean;
  size_before: number | null;
  size_after: number | null;
  /** This file's stanza in git's format (possibly cut), or null (see omitted_reason). */
  patch: string | null;
  patch_bytes: number;
  /**
   * git's whole stanza as bytes when it is not UTF-8 text (and fits the per-file cap): `patch`
   * then holds only the lines before the first such line and the row is `truncated`.
   */
  patch_raw?: Buffer;
  omitted_reason: OmittedReason | null;
  /**
   * The row's two sides as the delta received them (bytes, or why they are missing), handed on so
   * the completion can keep them for undoing the run. A rename's `before` is its old path's side.
   */
  sides: { before: FileSide | null; after: FileSide | null };
}

export interface DeltaOutput {
  /** Stored rows: at most maxChangedFiles, in path order (a rename by its new path). */
  files: DeltaFile[];
  changed_count: number;
  added_count: number;
  modified_count: number;
  deleted_count: number;
  renamed_count: number;
  binary_count: number;
  /** Changed files beyond the row cap (not in `files`). */
  omitted_count: number;
  total_patch_bytes: number;
  /** Reasons the delta itself added: `rows`, `file_patch`, `run_budget`. */
  truncated_reasons: TruncatedReason[];
}
