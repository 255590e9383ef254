import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import type { Limits } from '../../shared/index.ts';
import type { DeltaFile, FileSide } from '../delta/types.ts';
import {
  storageFailure,
  type ContentSideInput,
  type FileContentInput,
  type PreparedContent,
  type Store,
} from '../store/index.ts';

/**
 * The contents a completion keeps for undoing its run: each stored row's two sides, hashed and
 * compressed before the storing transaction (so the database lock is not held while compressing).
 */

const SUBMODULE_MODE = '160000';

/** One side: absent, unavailable (and why), or its bytes hashed and compressed. */
function prepareSide(s: FileSide | null, maxFileBytes: number, seen: Map<string, PreparedContent>): ContentSideInput {
  if (s === null) return { mode: null };
  if (s.mode === SUBMODULE_MODE) return { mode: s.mode, reason: 'submodule' };
  if (s.size > maxFileBytes) return { mode: s.mode, reason: 'too_large' };
  if (s.bytes === null) return { mode: s.mode, reason: s.unavailable ?? 'no_snapshot' };
  if (s.bytes.length > maxFileBytes) return { mode: s.mode, reason: 'too_large' };
  const sha256 = createHash('sha256').update(s.bytes).digest('hex');
  const known = seen.get(sha256);
  if (known) return { ...known, mode: s.mode };
  const packed = deflateSync(s.bytes);
  // Content that does not shrink (already compressed, random) is kept as it is.
  const side: PreparedContent =
    packed.length < s.bytes.length
      ? { mode: s.mode, sha256, size: s.bytes.length, codec: 'deflate', data: packed }
      : { mode: s.mode, sha256, size: s.bytes.length, codec: 'raw', data: Buffer.from(s.bytes) };
  seen.set(sha256, side);
  return side;
}

/** The contents of a delta's stored rows, in their order. */
export function prepareContents(files: readonly DeltaFile[], maxFileBytes: number): FileContentInput[] {
  const seen = new Map<string, PreparedContent>();
  return files.map((f) => ({
    before: prepareSide(f.sides.before, maxFileBytes, seen),
    after: prepareSide(f.sides.after, maxFileBytes, seen),
  }));
}

/**
 * Stores a change's contents inside the completion's transaction, in a savepoint of their own: a
 * database that refuses them (a full disk) loses only the contents, never the change's rows; the
 * files are then recorded as `storage_failed` (when even that write is refused, as not recorded),
 * and the cause is logged.
 */
export function storeContents(
  store: Store,
  limits: Pick<Limits, 'contentStoreMaxBytes'>,
  at: { sessionId: string; changeId: string; now: number },
  contents: readonly FileContentInput[],
  log: (message: string) => void,
): void {
  const { sessionId, changeId, now } = at;
  try {
    store.transaction(() => store.contents.attach(sessionId, changeId, contents, limits.contentStoreMaxBytes, now));
    return;
  } catch (err) {
    if (!storageFailure(err, 'contents')) throw err;
    log(`the contents of ${changeId} of session ${sessionId} were not stored: ${(err as Error).message}`);
  }
  try {
    store.transaction(() => store.contents.markUnavailable(sessionId, changeId, contents, 'storage_failed'));
  } catch (err) {
    if (!storageFailure(err, 'contents')) throw err;
    log(`${changeId} of session ${sessionId} could not be marked as without contents: ${(err as Error).message}`);
  }
}
