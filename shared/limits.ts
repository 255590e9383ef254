/** The bounds of docs/contract.md section 7. Every value is overridable by its environment variable or `--max-...` flag. */
export interface Limits {
  /**
   * Files listed per workspace (count): a backstop; time (`scanTimeoutMs`, git's deadline) and memory
   * (`maxCheckpointMemoryBytes`) are the bounds that scale. Default 1,000,000. RUNDIFF_MAX_SCANNED_FILES
   */
  maxScannedFiles: number;
  /** Changed files stored as rows per change (count). Default 100,000. RUNDIFF_MAX_CHANGED_FILES */
  maxChangedFiles: number;
  /** Patch bytes per file (UTF-8 bytes). Default 131,072. RUNDIFF_MAX_FILE_PATCH_BYTES */
  maxFilePatchBytes: number;
  /** Patch bytes per change (UTF-8 bytes). Default 524,288. RUNDIFF_MAX_RUN_PATCH_BYTES */
  maxRunPatchBytes: number;
  /** Content snapshot per file (bytes). Default 524,288. RUNDIFF_MAX_SNAPSHOT_BYTES */
  maxSnapshotBytes: number;
  /** Content held by all live checkpoints together (bytes). Default 268,435,456. RUNDIFF_MAX_CHECKPOINT_MEMORY_BYTES */
  maxCheckpointMemoryBytes: number;
  /** Soft scan time per phase (ms). Default 1,000. RUNDIFF_SCAN_TIMEOUT_MS */
  scanTimeoutMs: number;
  /** Whole per-file diff time budget (ms). Default 100. RUNDIFF_DIFF_TIMEOUT_MS */
  diffTimeoutMs: number;
  /** Checkpoint lifetime since the run's last event (ms). Default 6 h. RUNDIFF_CHECKPOINT_TTL_MS */
  checkpointTtlMs: number;
  /**
   * Folder watches the live feed may hold over all open runs (count; lowered to a quarter of the
   * system's per-user inotify limit). Past it a workspace is checked periodically instead. Default
   * 20,000. RUNDIFF_LIVE_FEED_MAX_WATCHES
   */
  liveFeedMaxWatches: number;
  /** Request body (bytes). Default 2 MiB. RUNDIFF_MAX_BODY_BYTES */
  maxBodyBytes: number;
  /** Run-level changes kept per session (count). Default 200. RUNDIFF_MAX_CHANGES_PER_SESSION */
  maxChangesPerSession: number;
  /** Age limit of stored changes (days). Default 30. RUNDIFF_RETENTION_DAYS */
  retentionDays: number;
  /** Before/after bytes of one changed file kept for undoing a run (bytes, each side). Default 8 MiB. RUNDIFF_MAX_CONTENT_FILE_BYTES */
  maxContentFileBytes: number;
  /** All kept file contents together, compressed (bytes); the oldest changes' contents go first. Default 1 GiB. RUNDIFF_CONTENT_STORE_MAX_BYTES */
  contentStoreMaxBytes: number;
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxScannedFiles: 1_000_000,
  maxChangedFiles: 100_000,
  maxFilePatchBytes: 128 * 1024,
  maxRunPatchBytes: 512 * 1024,
  maxSnapshotBytes: 512 * 1024,
  maxCheckpointMemoryBytes: 256 * 1024 * 1024,
  scanTimeoutMs: 1_000,
  diffTimeoutMs: 100,
  checkpointTtlMs: 6 * 60 * 60 * 1000,
  liveFeedMaxWatches: 20_000,
  maxBodyBytes: 2 * 1024 * 1024,
  maxChangesPerSession: 200,
  retentionDays: 30,
  maxContentFileBytes: 8 * 1024 * 1024,
  contentStoreMaxBytes: 1024 * 1024 * 1024,
});

/** Environment variable of each limit (a `--max-...`-style flag exists alike, see server/config.ts). */
export const LIMIT_ENV: Readonly<Record<keyof Limits, string>> = Object.freeze({
  maxScannedFiles: 'RUNDIFF_MAX_SCANNED_FILES',
  maxChangedFiles: 'RUNDIFF_MAX_CHANGED_FILES',
  maxFilePatchBytes: 'RUNDIFF_MAX_FILE_PATCH_BYTES',
  maxRunPatchBytes: 'RUNDIFF_MAX_RUN_PATCH_BYTES',
  maxSnapshotBytes: 'RUNDIFF_MAX_SNAPSHOT_BYTES',
  maxCheckpointMemoryBytes: 'RUNDIFF_MAX_CHECKPOINT_MEMORY_BYTES',
  scanTimeoutMs: 'RUNDIFF_SCAN_TIMEOUT_MS',
  diffTimeoutMs: 'RUNDIFF_DIFF_TIMEOUT_MS',
  checkpointTtlMs: 'RUNDIFF_CHECKPOINT_TTL_MS',
  liveFeedMaxWatches: 'RUNDIFF_LIVE_FEED_MAX_WATCHES',
  maxBodyBytes: 'RUNDIFF_MAX_BODY_BYTES',
  maxChangesPerSession: 'RUNDIFF_MAX_CHANGES_PER_SESSION',
  retentionDays: 'RUNDIFF_RETENTION_DAYS',
  maxContentFileBytes: 'RUNDIFF_MAX_CONTENT_FILE_BYTES',
  contentStoreMaxBytes: 'RUNDIFF_CONTENT_STORE_MAX_BYTES',
});
