/**
 * The bounds of docs/contract.md section 7 (types only: their defaults, bounds, environment variables
 * and `--max-...` flags are written once, in the settings table of server/config.ts).
 */
export interface Limits {
  /**
   * Files listed per workspace (count): a backstop; time (`scanTimeoutMs`, git's deadline) and memory
   * (`maxCheckpointMemoryBytes`) are the bounds that scale. RUNDIFF_MAX_SCANNED_FILES
   */
  maxScannedFiles: number;
  /** Changed files stored as rows per change (count). RUNDIFF_MAX_CHANGED_FILES */
  maxChangedFiles: number;
  /** Patch bytes per file (UTF-8 bytes). RUNDIFF_MAX_FILE_PATCH_BYTES */
  maxFilePatchBytes: number;
  /** Patch bytes per change (UTF-8 bytes). RUNDIFF_MAX_RUN_PATCH_BYTES */
  maxRunPatchBytes: number;
  /**
   * Patch bytes of one file computed on request from its kept contents, where its stored patch
   * falls short (left out for the change's patch budget, or cut at the per-file bound) (UTF-8 bytes).
   * RUNDIFF_MAX_OPENED_PATCH_BYTES
   */
  maxOpenedPatchBytes: number;
  /** Content snapshot per file (bytes). RUNDIFF_MAX_SNAPSHOT_BYTES */
  maxSnapshotBytes: number;
  /** Content held by all live checkpoints together (bytes). RUNDIFF_MAX_CHECKPOINT_MEMORY_BYTES */
  maxCheckpointMemoryBytes: number;
  /** Soft scan time per phase (ms). RUNDIFF_SCAN_TIMEOUT_MS */
  scanTimeoutMs: number;
  /** Whole per-file diff time budget (ms). RUNDIFF_DIFF_TIMEOUT_MS */
  diffTimeoutMs: number;
  /** Checkpoint lifetime since the run's last event (ms). RUNDIFF_CHECKPOINT_TTL_MS */
  checkpointTtlMs: number;
  /**
   * Folder watches the live feed may hold over all open runs (count; lowered to a quarter of the
   * system's per-user inotify limit). Past it a workspace is checked periodically instead.
   * RUNDIFF_LIVE_FEED_MAX_WATCHES
   */
  liveFeedMaxWatches: number;
  /** Request body (bytes). RUNDIFF_MAX_BODY_BYTES */
  maxBodyBytes: number;
  /** Run-level changes kept per session (count). RUNDIFF_MAX_CHANGES_PER_SESSION */
  maxChangesPerSession: number;
  /** Age limit of stored changes (days). RUNDIFF_RETENTION_DAYS */
  retentionDays: number;
  /** Before/after bytes of one changed file kept for undoing a run (bytes, each side). RUNDIFF_MAX_CONTENT_FILE_BYTES */
  maxContentFileBytes: number;
  /** All kept file contents together, compressed (bytes); the oldest changes' contents go first. RUNDIFF_CONTENT_STORE_MAX_BYTES */
  contentStoreMaxBytes: number;
  /**
   * A changed file's patch text indexed for search (characters from its start; a byte each for
   * ASCII text); the rest of a longer patch is not found by search. RUNDIFF_SEARCH_PATCH_CHARS
   */
  searchPatchChars: number;
  /**
   * Documents holding a query's words that one search looks at, newest first (count): the bound
   * on a search's work on SQLite. RUNDIFF_SEARCH_MAX_CANDIDATES
   */
  searchMaxCandidates: number;
  /** Time one search may take on PostgreSQL (ms; its statement timeout). RUNDIFF_SEARCH_TIMEOUT_MS */
  searchTimeoutMs: number;
  /** Lines of the file one blame attributes (count; a longer file answers 413). RUNDIFF_BLAME_MAX_LINES */
  blameMaxLines: number;
  /**
   * Changes of the file one blame walks, newest first (count); older ones are left out and the
   * answer says `truncated`. RUNDIFF_BLAME_MAX_CHANGES
   */
  blameMaxChanges: number;
}
