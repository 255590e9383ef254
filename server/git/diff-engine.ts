import os from 'node:os';
import type { BatchDiff, FallbackDiff, RenameDetector } from '../delta/index.ts';
import { diffPairs } from './batch-diff.ts';
import { detectRenames } from './rename-pairing.ts';

export { parseNumstatPatch } from './batch-diff.ts';
export { gitBlobId, quoteForImport } from './fast-import.ts';
export { attributePattern, parseRawRenames } from './rename-pairing.ts';

/**
 * git as the exact diff engine for the delta. Both sides' bytes are already in memory, so nothing
 * is read from a workspace, and git runs only in a fresh private temp folder (scratch-repo.ts):
 * - line diffs: one `git diff --no-index` over all pairs (batch-diff.ts);
 * - renames: both sides streamed into a throw-away bare repository with `git fast-import`
 *   (fast-import.ts) and paired by `git diff-tree -M` (rename-pairing.ts).
 * The parsers and encoders those files export are re-exported here: they are the engine's
 * public helpers.
 */

export interface GitDiffEngineOptions {
  /** Folder in which the private scratch repositories are created. Default: the OS temp folder. */
  tmpDir?: string;
  /** The git executable (tests point it at a missing file). */
  gitBinary?: string;
  /** Content offered to rename detection at most (bytes); beyond, only identical contents pair. Default 128 MiB. */
  maxRenameBytes?: number;
}

export interface GitDiffEngine {
  renameDetector: RenameDetector;
  batchDiff: BatchDiff;
  fallbackDiff: FallbackDiff;
}

const DEFAULT_MAX_RENAME_BYTES = 128 * 1024 * 1024;

export function createGitDiffEngine(opts: GitDiffEngineOptions = {}): GitDiffEngine {
  const tmpRoot = opts.tmpDir ?? os.tmpdir();
  const maxRenameBytes = opts.maxRenameBytes ?? DEFAULT_MAX_RENAME_BYTES;
  const batchDiff: BatchDiff = (pairs, timeoutMsPerFile) => diffPairs(pairs, timeoutMsPerFile, tmpRoot, opts.gitBinary);
  return {
    renameDetector: (deleted, added, timeoutMs) =>
      detectRenames(deleted, added, timeoutMs, tmpRoot, maxRenameBytes, opts.gitBinary),
    batchDiff,
    fallbackDiff: async (before, after, timeoutMs) => {
      const [res] = await batchDiff([{ before, after }], timeoutMs);
      return res ?? null;
    },
  };
}
