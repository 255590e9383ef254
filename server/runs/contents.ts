import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { deflate } from 'node:zlib';
import type { Limits } from '../../shared/index.ts';
import type { DeltaFile, FileSide } from '../delta/types.ts';
import {
  storageFailure,
  type ContentSideInput,
  type FileContentInput,
  type PendingContent,
  type PreparedContent,
  type Store,
  type StoreTx,
} from '../store/index.ts';

/**
 * The contents a completion keeps for undoing its run: each stored row's two sides, hashed and
 * compressed before the storing transaction (so the database lock is not held while compressing).
 */

const SUBMODULE_MODE = '160000';

// Compression runs on libuv's thread pool: a completion of many large files must not block the
// server's main thread while its contents are packed.
const deflateAsync = promisify(deflate);

/** Compressions in flight at once (the thread pool has four threads by default). */
const PARALLEL = 4;

/** One side: absent, unavailable (and why), or its bytes hashed and compressed. */
async function prepareSide(
  s: FileSide | null,
  maxFileBytes: number,
  seen: Map<string, Promise<PreparedContent>>,
): Promise<ContentSideInput> {
  if (s === null) return { mode: null };
  if (s.mode === SUBMODULE_MODE) return { mode: s.mode, reason: 'submodule' };
  if (s.size > maxFileBytes) return { mode: s.mode, reason: 'too_large' };
  if (s.bytes === null) return { mode: s.mode, reason: s.unavailable ?? 'no_snapshot' };
  if (s.bytes.length > maxFileBytes) return { mode: s.mode, reason: 'too_large' };
  const bytes = s.bytes;
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  let packing = seen.get(sha256);
  if (!packing) {
    packing = deflateAsync(bytes).then((packed): PreparedContent =>
      // Content that does not shrink (already compressed, random) is kept as it is.
      packed.length < bytes.length
        ? { mode: s.mode, sha256, size: bytes.length, codec: 'deflate', data: packed }
        : { mode: s.mode, sha256, size: bytes.length, codec: 'raw', data: Buffer.from(bytes) },
    );
    seen.set(sha256, packing);
  }
  return { ...(await packing), mode: s.mode };
}

/** The contents of a delta's stored rows, in their order. */
export async function prepareContents(files: readonly DeltaFile[], maxFileBytes: number): Promise<FileContentInput[]> {
  const seen = new Map<string, Promise<PreparedContent>>();
  const out: FileContentInput[] = new Array(files.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < files.length; i = next++) {
      const f = files[i]!;
      out[i] = {
        before: await prepareSide(f.sides.before, maxFileBytes, seen),
        after: await prepareSide(f.sides.after, maxFileBytes, seen),
      };
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, files.length) }, worker));
  return out;
}

/** Stored bytes written per transaction: between two, the event loop serves other work. */
const FILL_BATCH_BYTES = 256 * 1024;

/**
 * Records a change's contents inside the completion's transaction, in a savepoint of their own: a
 * database that refuses them (a full disk) loses only the contents, never the change's rows; the
 * files are then recorded as `storage_failed` (when even that write is refused, as not recorded),
 * and the cause is logged. Answers the contents still to write (`fillContents`).
 */
export async function recordContents(
  store: StoreTx,
  at: { sessionId: string; changeId: string },
  contents: readonly FileContentInput[],
  log: (message: string) => void,
): Promise<PendingContent[]> {
  const { sessionId, changeId } = at;
  try {
    return await store.transaction((tx) => tx.contents.record(sessionId, changeId, contents));
  } catch (err) {
    if (!storageFailure(err, 'contents')) throw err;
    log(`the contents of ${changeId} of session ${sessionId} were not stored: ${(err as Error).message}`);
  }
  try {
    await store.transaction((tx) => tx.contents.markUnavailable(sessionId, changeId, contents, 'storage_failed'));
  } catch (err) {
    if (!storageFailure(err, 'contents')) throw err;
    log(`${changeId} of session ${sessionId} could not be marked as without contents: ${(err as Error).message}`);
  }
  return [];
}

/**
 * Writes recorded contents right after the completion's transaction, about 256 KiB per
 * transaction with the event loop served in between, so keeping a large change's bytes does not
 * hold the server. A write the database refuses marks what is left `storage_failed` (logged).
 */
export async function fillContents(
  store: Store,
  limits: Pick<Limits, 'contentStoreMaxBytes'>,
  at: { sessionId: string; changeId: string; now: number },
  pending: readonly PendingContent[],
  log: (message: string) => void,
): Promise<void> {
  let i = 0;
  while (i < pending.length) {
    const batch: PendingContent[] = [];
    let bytes = 0;
    while (i < pending.length && (batch.length === 0 || bytes + pending[i]!.content.data.length <= FILL_BATCH_BYTES)) {
      bytes += pending[i]!.content.data.length;
      batch.push(pending[i++]!);
    }
    try {
      await store.transaction((tx) => tx.contents.fill(batch, limits.contentStoreMaxBytes, at.now));
    } catch (err) {
      if (!storageFailure(err, 'contents')) throw err;
      log(`the contents of ${at.changeId} of session ${at.sessionId} were not stored: ${(err as Error).message}`);
      try {
        await store.transaction((tx) => tx.contents.settlePending(at.sessionId, at.changeId, 'storage_failed'));
      } catch (again) {
        log(`${at.changeId} of session ${at.sessionId} keeps contents marked pending: ${(again as Error).message}`);
      }
      return;
    }
    if (i < pending.length) await new Promise((resolve) => setImmediate(resolve));
  }
}
