import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import { DEFAULT_LIMITS } from '../config.ts';
import type { DeltaFile } from '../delta/index.ts';
import { openStore } from '../store/index.ts';
import { countRows, selectRows, sqliteDb } from '../test-support/store-engines.ts';
import { testStoreEngine } from '../test-support/server-harness.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempDir } from '../test-support/temp-repo.ts';
import { fillContents, prepareContents, recordContents } from './contents.ts';
import { toNewFile } from './payloads.ts';
import { createTempRepo, type TempRepo } from '../test-support/index.ts';

/**
 * The content store behind undo: each completed change keeps its files' before and after bytes,
 * content-addressed and compressed, under a global budget that evicts the oldest changes' contents
 * first and is never exceeded; deleting a session or a retention sweep frees the space; a database
 * that refuses the contents keeps the change's rows.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(
  limits: Record<string, number> = {},
  files: Record<string, string> = { 'a.txt': 'a\n' },
): Promise<{ t: TestServer; repo: TempRepo }> {
  const t = await startTestServer({ limits });
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files, git: false });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
  return { t, repo };
}

/** One run that makes the edits `edit` does. */
async function run(t: TestServer, runId: string, edit: () => void, sessionId = 's1'): Promise<void> {
  expect((await t.post({ type: 'run.started', session_id: sessionId, run_id: runId })).body.tracking).toBe(true);
  edit();
  const done = await t.post({ type: 'run.completed', session_id: sessionId, run_id: runId });
  expect(done.status).toBe(200);
  // The contents are written after the answer.
  await t.server.recorder.contentsSettled(sessionId);
}

const health = async (t: TestServer) => (await t.get('/api/health')).body.content_store;
const rows = (t: TestServer, changeId: string) =>
  selectRows<Record<string, string | null>>(
    t.server.store,
    `SELECT f.path, c.before_sha256, c.before_reason, c.after_sha256, c.after_reason, c.before_mode, c.after_mode
     FROM change_file_contents c JOIN workspace_run_change_files f ON f.id = c.file_id
     WHERE c.change_id = ? ORDER BY f.ord`,
    [changeId],
  );
const blobCount = (t: TestServer) => countRows(t.server.store, 'content_blobs');
const storedSum = async (t: TestServer) =>
  Number(
    (
      await selectRows<{ n: number | string }>(
        t.server.store,
        'SELECT COALESCE(SUM(stored_bytes), 0) AS n FROM content_blobs',
      )
    )[0]!.n,
  );

describe('the content store', () => {
  it('keeps both sides of every changed file, identical contents once, and shows the bytes in /api/health', async () => {
    const { t, repo } = await setup({}, { 'a.txt': 'a\n', 'gone.txt': 'same text\n' });
    expect(await health(t)).toEqual({ bytes_used: 0, max_bytes: 1024 * 1024 * 1024, blobs: 0 });
    await run(t, 'r1', () => {
      repo.write('a.txt', 'a\nb\n');
      repo.rm('gone.txt');
      repo.write('copy.txt', 'a\nb\n'); // the same bytes as a.txt's new side
    });
    const r = await rows(t, 'run:r1');
    expect(r.map((x) => x.path)).toEqual(['a.txt', 'copy.txt', 'gone.txt']);
    const [a, copy, gone] = r;
    expect(a!.before_sha256).not.toBeNull();
    expect(a!.after_sha256).toBe(copy!.after_sha256);
    expect(copy!.before_mode).toBeNull();
    expect(gone!.after_mode).toBeNull();
    expect((await t.server.store.contents.blob(gone!.before_sha256!))!.toString()).toBe('same text\n');
    // a's before, the shared after, gone's before.
    expect(await blobCount(t)).toBe(3);
    const stats = await health(t);
    expect(stats.blobs).toBe(3);
    expect(stats.bytes_used).toBe(await storedSum(t));
  });

  it('a file over the per-file bound is recorded as too_large, the rest of the change is kept', async () => {
    const { t, repo } = await setup({ maxContentFileBytes: 100 });
    await run(t, 'r1', () => {
      repo.write('a.txt', 'x'.repeat(101));
      repo.write('small.txt', 'fits\n');
    });
    const [a, small] = await rows(t, 'run:r1');
    expect(a).toMatchObject({ path: 'a.txt', after_sha256: null, after_reason: 'too_large' });
    expect(a!.before_sha256).not.toBeNull(); // its 2-byte start fits
    expect(small).toMatchObject({ path: 'small.txt', after_reason: null });
    expect(small!.after_sha256).not.toBeNull();
  });

  it('the budget evicts the oldest changes first and is never exceeded; a content larger than the budget is recorded as budget', async () => {
    // Random bytes do not compress: each file costs its size.
    const budget = 10_000;
    const { t, repo } = await setup({ contentStoreMaxBytes: budget }, {});
    const sizes: number[] = [];
    for (let i = 1; i <= 4; i++) {
      await run(t, `r${i}`, () => repo.write(`f${i}.bin`, randomBytes(3_000)));
      const used = (await health(t)).bytes_used;
      sizes.push(used);
      expect(used).toBeLessThanOrEqual(budget);
      expect(used).toBe(await storedSum(t));
    }
    // Positive control: three fit (9,000 bytes), the fourth needed room, so the first went.
    expect(sizes.slice(0, 3)).toEqual([3_000, 6_000, 9_000]);
    expect((await rows(t, 'run:r1'))[0]).toMatchObject({ after_sha256: null, after_reason: 'evicted' });
    expect((await rows(t, 'run:r2'))[0]!.after_sha256).not.toBeNull();
    expect((await rows(t, 'run:r4'))[0]!.after_sha256).not.toBeNull();

    await run(t, 'r5', () => repo.write('huge.bin', randomBytes(budget + 1)));
    expect((await rows(t, 'run:r5'))[0]).toMatchObject({
      path: 'huge.bin',
      after_sha256: null,
      after_reason: 'budget',
    });
    expect((await health(t)).bytes_used).toBeLessThanOrEqual(budget);
  });

  it('deleting the session and the retention sweeps free the contents', async () => {
    const { t, repo } = await setup({ maxChangesPerSession: 1 });
    await run(t, 'r1', () => repo.write('a.txt', 'one\n'));
    expect(await blobCount(t)).toBe(2);
    // The newest-N retention removes r1 with the storing of r2: only r2's contents stay.
    await run(t, 'r2', () => repo.write('a.txt', 'two\n'));
    expect(await rows(t, 'run:r1')).toEqual([]);
    expect(await countRows(t.server.store, 'change_file_contents')).toBe(1);
    expect(await blobCount(t)).toBe(2); // "one" and "two"; "a" went with r1
    expect((await health(t)).bytes_used).toBe(await storedSum(t));

    // The age sweep.
    expect(await t.server.store.changes.deleteOlderThan(Number.MAX_SAFE_INTEGER)).toBe(1);
    expect(await blobCount(t)).toBe(0);
    expect(await health(t)).toMatchObject({ bytes_used: 0, blobs: 0 });

    await run(t, 'r3', () => repo.write('a.txt', 'three\n'));
    expect(await blobCount(t)).toBe(2);
    expect((await t.request('DELETE', '/api/hermes/sessions/s1')).status).toBe(204);
    expect(await blobCount(t)).toBe(0);
    expect(await health(t)).toMatchObject({ bytes_used: 0, blobs: 0 });
  });

  // A full database is made with SQLite's page limit; PostgreSQL has no such per-database switch.
  it.skipIf(testStoreEngine() !== 'sqlite')(
    'a database that refuses the contents still stores the change, its files marked storage_failed',
    async () => {
      const { t, repo } = await setup();
      await run(t, 'r0', () => repo.write('warm.txt', 'w\n'));
      expect((await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' })).body.tracking).toBe(true);
      repo.write('big.bin', randomBytes(400_000));
      // Room for the change's rows, not for 400 KB of contents.
      const db = sqliteDb(t.server.store);
      db.pragma('wal_checkpoint(TRUNCATE)');
      const pages = db.pragma('page_count', { simple: true }) as number;
      db.pragma(`max_page_count = ${pages + 8}`);
      const done = await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
      await t.server.recorder.contentsSettled('s1', 'run:r1');
      db.pragma('max_page_count = 1073741823');
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ change_id: 'run:r1', changed_count: 1 });
      expect(await rows(t, 'run:r1')).toEqual([
        expect.objectContaining({ path: 'big.bin', after_sha256: null, after_reason: 'storage_failed' }),
      ]);
    },
  );

  it('contents are written a few hundred KiB per transaction, the rest pending until their turn', async () => {
    const dir = createTempDir('rundiff-fill-');
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const store = openStore(path.join(dir, 'db.sqlite'));
    cleanups.push(() => store.close());
    const files: DeltaFile[] = ['a.bin', 'b.bin', 'c.bin'].map((p) => {
      const bytes = randomBytes(700 * 1024);
      return {
        path: p,
        old_path: null,
        path_key: p,
        old_path_key: null,
        change_type: 'added',
        additions: 0,
        deletions: 0,
        binary: true,
        truncated: false,
        size_before: null,
        size_after: bytes.length,
        patch: null,
        patch_bytes: 0,
        omitted_reason: 'binary',
        sides: { before: null, after: { bytes, size: bytes.length, mode: '100644' } },
      };
    });
    const contents = await prepareContents(files, DEFAULT_LIMITS.maxContentFileBytes);
    const pending = await store.transaction(async (tx) => {
      await tx.sessions.touch('s1', 1);
      await tx.changes.insert(
        {
          change_id: 'run:r1',
          session_id: 's1',
          run_id: 'r1',
          tool_call_id: null,
          source: 'run',
          workspace: dir,
          workspace_kind: 'filesystem',
          started_at: 1,
          finished_at: 2,
          changed_count: 3,
          added_count: 3,
          modified_count: 0,
          deleted_count: 0,
          renamed_count: 0,
          binary_count: 3,
          truncated: false,
          truncated_reasons: [],
          total_patch_bytes: 0,
          overlapping: false,
          omitted_count: 0,
          created_at: 2,
        },
        files.map(toNewFile),
        200,
      );
      return recordContents(tx, { sessionId: 's1', changeId: 'run:r1' }, contents, () => {});
    });
    const reasons = () =>
      (
        store.db.prepare('SELECT after_reason FROM change_file_contents ORDER BY file_id').all() as {
          after_reason: string | null;
        }[]
      ).map((r) => r.after_reason);
    expect(reasons()).toEqual(['pending', 'pending', 'pending']);
    // The first transaction runs at once (before the event loop's next turn); the next waits for
    // that turn. A callback queued right after the call runs in that turn, before the next batch.
    const filling = fillContents(
      store,
      DEFAULT_LIMITS,
      { sessionId: 's1', changeId: 'run:r1', now: 3 },
      pending,
      () => {},
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(reasons().filter((r) => r === 'pending')).toHaveLength(2);
    await filling;
    expect(reasons()).toEqual([null, null, null]);
    expect((await store.contents.stats(DEFAULT_LIMITS.contentStoreMaxBytes)).blobs).toBe(3);
  });
});
