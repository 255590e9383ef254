import type { ChangeType, FileWithPatch } from '../../shared/index.ts';
import { computeDelta, type FileSide } from '../delta/index.ts';
import { createGitDiffEngine, type GitDiffEngine } from '../git/index.ts';
import { keyFromShown } from '../paths/index.ts';
import type { ContentsApi, StoredSide } from '../store/index.ts';

/**
 * A file's whole patch computed again from its sides, for a row whose stored patch falls short: left
 * out for the change's patch budget, or cut at the per-file bound. The budget and the bound size what
 * is stored inline with the rows; what a reader can open is bounded per request (`maxBytes`) and by
 * what the content store kept. The patch is the delta's own (git's counts, rename pairing and hunks
 * as at completion), so it agrees with the row's counts; where it would not, none is given.
 */

export interface KeptPatchBounds {
  /** Patch bytes of one file at most (UTF-8); past it the patch is cut at a line and says so. */
  maxBytes: number;
  /** The per-file diff time budget. */
  diffTimeoutMs: number;
}

export interface KeptPatch {
  patch: string;
  patch_bytes: number;
  /** Cut at `maxBytes`. */
  truncated: boolean;
  /**
   * git's patch bytes when they are not UTF-8 text (a Latin-1 file): `patch` is then those bytes
   * decoded with U+FFFD for each invalid sequence, for reading only; these are what applies.
   */
  raw?: Buffer;
}

/** What of a row the patch is computed for. */
export interface PatchedRow {
  path: string;
  path_base64?: string | null;
  old_path: string | null;
  old_path_base64?: string | null;
  change_type: ChangeType;
  binary: boolean;
  additions: number;
  deletions: number;
}

/**
 * True when the row's stored patch is less than the whole change of the file and its kept contents
 * can make it whole: left out for the budget, or cut; with `binary`, a changed binary file too (its
 * git binary patch, for a patch that is applied rather than read).
 */
export function fallsShort(
  row: Pick<FileWithPatch, 'omitted_reason' | 'truncated' | 'patch' | 'binary'>,
  binary: boolean,
): boolean {
  if (row.omitted_reason === 'budget') return true;
  if (row.truncated && row.patch !== null && !row.binary) return true;
  return binary && row.binary && row.omitted_reason === 'binary';
}

/**
 * The row's patch from both sides' bytes (an absent side: null), or null when a side has no bytes or
 * the result is not the row (another change type, other counts). `binary`: a binary file gets git's
 * binary patch; otherwise a binary row gets none.
 */
export async function patchOfSides(
  row: PatchedRow,
  before: FileSide | null,
  after: FileSide | null,
  bounds: KeptPatchBounds,
  opts: { binary: boolean; engine?: GitDiffEngine },
): Promise<KeptPatch | null> {
  if ((before && !before.bytes) || (after && !after.bytes)) return null;
  if (row.binary && !opts.binary) return null;
  // A file binary by attribute holds no NUL: the row says what it is.
  const mark = (s: FileSide | null): FileSide | null => (s && row.binary ? { ...s, binaryAttr: true } : s);
  const key = keyFromShown(row.path, row.path_base64);
  const changes =
    row.change_type === 'renamed' && row.old_path !== null
      ? [
          { path: keyFromShown(row.old_path, row.old_path_base64), before: mark(before), after: null },
          { path: key, before: null, after: mark(after) },
        ]
      : [{ path: key, before: mark(before), after: mark(after) }];
  const engine = opts.engine ?? createGitDiffEngine();
  const delta = await computeDelta({
    changes,
    limits: {
      maxChangedFiles: changes.length,
      maxFilePatchBytes: bounds.maxBytes,
      maxRunPatchBytes: bounds.maxBytes,
      diffTimeoutMs: bounds.diffTimeoutMs,
    },
    batchDiff: engine.batchDiff,
    renameDetector: engine.renameDetector,
    fallbackDiff: engine.fallbackDiff,
    binaryPatches: opts.binary,
  });
  const file = delta.files.length === 1 ? delta.files[0]! : null;
  if (!file || file.path_key !== key || file.change_type !== row.change_type || file.patch === null) return null;
  if (!row.binary && (file.additions !== row.additions || file.deletions !== row.deletions)) return null;
  if (file.patch_raw) {
    const shown = file.patch_raw.toString('utf8');
    return { patch: shown, patch_bytes: Buffer.byteLength(shown), truncated: false, raw: file.patch_raw };
  }
  return { patch: file.patch, patch_bytes: file.patch_bytes, truncated: file.truncated };
}

/** A kept side as the delta reads it: null for a side the path did not have; bytes null when not kept. */
async function sideOf(contents: ContentsApi, side: StoredSide, present: boolean): Promise<FileSide | null> {
  if (!present) return null;
  const bytes = side.mode !== null && side.sha256 !== null ? await contents.blob(side.sha256) : null;
  return { bytes, size: bytes?.length ?? 0, mode: side.mode ?? '100644' };
}

/** Computed patches kept for repeated opens, at most this many bytes in all. */
const KEPT_BYTES = 32 * 1024 * 1024;

export interface KeptPatches {
  /** The row's patch from the content store's bytes of change `changeId`; null when they were not kept. */
  forRow(
    ids: { sessionId: string; changeId: string },
    row: PatchedRow & { id: string },
    opts: { binary: boolean },
  ): Promise<KeptPatch | null>;
}

/**
 * Patches from the content store, the last ones kept (a change's rows and kept bytes never change,
 * so a kept answer stays right; it goes when newer ones need the room).
 */
export function createKeptPatches(contents: ContentsApi, bounds: KeptPatchBounds): KeptPatches {
  const recent = new Map<string, KeptPatch>();
  let bytes = 0;
  const engine = createGitDiffEngine();
  return {
    async forRow(ids, row, opts) {
      const key = JSON.stringify([ids.sessionId, ids.changeId, row.id, opts.binary]);
      const hit = recent.get(key);
      if (hit !== undefined) {
        recent.delete(key);
        recent.set(key, hit);
        return hit;
      }
      const kept = await contents.get(ids.sessionId, ids.changeId, row.id);
      if (!kept) return null;
      const before = await sideOf(contents, kept.before, row.change_type !== 'added');
      const after = await sideOf(contents, kept.after, row.change_type !== 'deleted');
      const out = await patchOfSides(row, before, after, bounds, { ...opts, engine });
      // Only answers from kept bytes are kept: a side still being written may be there next time.
      if (out === null) return null;
      recent.set(key, out);
      bytes += out.patch_bytes + (out.raw?.length ?? 0);
      for (const [k, v] of recent) {
        if (bytes <= KEPT_BYTES || recent.size <= 1) break;
        recent.delete(k);
        bytes -= v.patch_bytes + (v.raw?.length ?? 0);
      }
      return out;
    },
  };
}
