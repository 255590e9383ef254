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
  type RawContent,
  type Store,
  type StoreTx,
} from '../store/index.ts';

/**
 * The contents a completion keeps for undoing its run: each stored row's two sides. They are
 * recorded `pending` in the storing transaction and hashed, compressed and written after the
 * completion is answered (`writeContentsLater`), so neither the answer nor the database lock
 * waits for the compression; a reader of a change's contents waits for its fill (`ContentFills`).
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

/**
 * The contents of a delta's stored rows, in their order, without hashing or compressing anything:
 * a side with bytes within the bound is raw (recorded `pending`, prepared after the answer).
 */
export function planContents(files: readonly DeltaFile[], maxFileBytes: number): FileContentInput[] {
  const plan = (s: FileSide | null): ContentSideInput => {
    if (s === null) return { mode: null };
    if (s.mode === SUBMODULE_MODE) return { mode: s.mode, reason: 'submodule' };
    if (s.size > maxFileBytes) return { mode: s.mode, reason: 'too_large' };
    if (s.bytes === null) return { mode: s.mode, reason: s.unavailable ?? 'no_snapshot' };
    if (s.bytes.length > maxFileBytes) return { mode: s.mode, reason: 'too_large' };
    return { mode: s.mode, raw: s.bytes };
  };
  return files.map((f) => ({ before: plan(f.sides.before), after: plan(f.sides.after) }));
}

/** Hashes and compresses recorded raw contents (identical bytes once), a few at a time off the main thread. */
export async function preparePending(
  pending: readonly PendingContent<PreparedContent | RawContent>[],
  maxFileBytes: number,
): Promise<PendingContent[]> {
  const seen = new Map<string, Promise<PreparedContent>>();
  const out: PendingContent[] = new Array(pending.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < pending.length; i = next++) {
      const p = pending[i]!;
      const c = p.content;
      if ('sha256' in c) {
        out[i] = { ...p, content: c };
        continue;
      }
      const side = await prepareSide({ bytes: c.raw, size: c.raw.length, mode: c.mode }, maxFileBytes, seen);
      // Planned within the bound, so it is prepared, never a reason.
      out[i] = { ...p, content: side as PreparedContent };
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, pending.length) }, worker));
  return out;
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
): Promise<PendingContent<PreparedContent | RawContent>[]> {
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
 * Prepares (hashes, compresses) recorded contents still raw, then writes them, about 256 KiB per
 * transaction with the event loop served in between, so keeping a large change's bytes does not
 * hold the server. A write the database refuses marks what is left `storage_failed` (logged).
 */
export async function fillContents(
  store: Store,
  limits: Pick<Limits, 'contentStoreMaxBytes' | 'maxContentFileBytes'>,
  at: { sessionId: string; changeId: string; now: number },
  recorded: readonly PendingContent<PreparedContent | RawContent>[],
  log: (message: string) => void,
): Promise<void> {
  // Already prepared (before the storing transaction): the first batch is written at once.
  const pending = recorded.every((p) => 'sha256' in p.content)
    ? (recorded as readonly PendingContent[])
    : await preparePending(recorded, limits.maxContentFileBytes);
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

/**
 * The fills of recorded contents still running, by change. A reader of a change's contents (undo,
 * the content route, the net change) waits for them; shutdown waits for all before the database
 * closes. A fill that fails marks what it could not write `storage_failed` (fillContents); one
 * stopped by a crash leaves its sides `pending`, which every reader reports as such.
 */
export interface ContentFills {
  /** Writes `pending` (prepared now) for the change, after the caller has answered. */
  start(
    store: Store,
    limits: Pick<Limits, 'contentStoreMaxBytes' | 'maxContentFileBytes'>,
    at: { sessionId: string; changeId: string; now: number },
    pending: readonly PendingContent<PreparedContent | RawContent>[],
  ): void;
  /** Resolves once no fill of the change (of any change of the session, without a change id) runs. */
  settled(sessionId: string, changeId?: string): Promise<void>;
  /** Resolves once no fill runs at all. */
  idle(): Promise<void>;
  running(): number;
}

export function createContentFills(log: (message: string) => void): ContentFills {
  const running = new Map<string, { sessionId: string; done: Promise<void> }>();
  const keyOf = (sessionId: string, changeId: string) => `${sessionId}\u0000${changeId}`;
  const all = (list: Iterable<{ done: Promise<void> }>) =>
    Promise.all([...list].map((r) => r.done)).then(() => undefined);
  return {
    start(store, limits, at, pending) {
      if (pending.length === 0) return;
      const key = keyOf(at.sessionId, at.changeId);
      const before = running.get(key)?.done ?? Promise.resolve();
      const done = (async () => {
        await before;
        // The completion's answer and events go out first.
        await new Promise((resolve) => setImmediate(resolve));
        try {
          await fillContents(store, limits, at, pending, log);
        } catch (err) {
          // Not a refusal of the database (fillContents settles those): say so, never leave it silent.
          log(`the contents of ${at.changeId} of session ${at.sessionId} were not written: ${(err as Error).message}`);
        }
      })();
      const entry = { sessionId: at.sessionId, done };
      running.set(key, entry);
      void done.finally(() => {
        if (running.get(key) === entry) running.delete(key);
      });
    },
    settled: (sessionId, changeId) =>
      all(
        changeId === undefined
          ? [...running.values()].filter((r) => r.sessionId === sessionId)
          : [running.get(keyOf(sessionId, changeId))].filter((r) => r !== undefined),
      ),
    idle: () => all(running.values()),
    running: () => running.size,
  };
}
