import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseEdgeBatch } from '../edge/index.ts';
import { createTestDatabase, type TestDatabase } from '../test-support/postgres.ts';
import { createTempDir } from '../test-support/temp-repo.ts';
import { openStore, type IngestBatch, type PendingContent, type SqliteStore } from './index.ts';
import { openPostgresStore } from './postgres/index.ts';
import type { Store } from './types.ts';
import { storedChange, storedFile } from '../test-support/store-fixtures.ts';

/**
 * A centre's ingest on both engines, fed with batches read from a real edge outbox (SQLite): the
 * same rows arrive, a batch applied again changes nothing, and refusals store nothing.
 */

const cleanups: (() => void | Promise<void>)[] = [];
let pgDb: TestDatabase;
beforeAll(async () => {
  pgDb = await createTestDatabase();
});
afterAll(async () => {
  await pgDb.drop();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function sqlite(): SqliteStore {
  const dir = createTempDir('rundiff-ingest-');
  const s = openStore(path.join(dir, 'r.db'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => s.close());
  return s;
}

async function postgres(): Promise<Store> {
  const own = await createTestDatabase();
  cleanups.push(() => own.drop());
  const s = await openPostgresStore(own.url);
  cleanups.push(() => s.close());
  return s;
}

/** An edge that stored a session with a run, its change of two files and one kept content. */
async function edgeBatch(sessionId = 's1', more = 0): Promise<IngestBatch> {
  // `more` further added files, each with a content of its own.
  const extra = Array.from({ length: more }, (_, i) => `more/f${String(i).padStart(4, '0')}.txt`);
  const extraContent = (p: string) => Buffer.from(`content of ${p}\n`.repeat(10));
  const edge = sqlite();
  await edge.outbox!.attach();
  const content = Buffer.from('kept content\n'.repeat(20));
  const sha = createHash('sha256').update(content).digest('hex');
  await edge.sessions.upsert(sessionId, { title: 'edge run', workspace: '/w' }, 1000);
  await edge.messages.insert({
    id: 'm1',
    session_id: sessionId,
    role: 'user',
    content: 'go',
    run_id: 'r1',
    tool_call_id: null,
    created_at: 1000,
  });
  await edge.runs.insert('run', {
    session_id: sessionId,
    run_id: 'r1',
    title: null,
    status: 'running',
    source: 'run',
    workspace: '/w',
    started_at: 1000,
    finished_at: null,
    error: null,
    change_id: 'run:r1',
    tracking: true,
    reason: null,
  });
  await edge.runs.finish('run', sessionId, 'r1', {
    status: 'completed',
    finished_at: 2000,
    error: null,
    tracking: true,
    reason: null,
    response: null,
  } as never);
  await edge.transaction(async (tx) => {
    await tx.changes.insert(
      storedChange(sessionId, 'r1', 2000, {
        started_at: 1000,
        changed_count: 2 + more,
        added_count: 2 + more,
        total_patch_bytes: 20,
      }),
      ['a.txt', 'b.txt', ...extra].map((p) => storedFile(p, { additions: 20, size_after: content.length })),
      200,
    );
    const data = deflateSync(content);
    const prepared = { mode: '100644', sha256: sha, size: content.length, codec: 'deflate' as const, data };
    const pending = await tx.contents.record(sessionId, 'run:r1', [
      { before: { mode: null }, after: prepared },
      { before: { mode: null }, after: { mode: '100644', reason: 'too_large' } },
      ...extra.map((p) => {
        const raw = extraContent(p);
        return {
          before: { mode: null },
          after: {
            mode: '100644',
            sha256: createHash('sha256').update(raw).digest('hex'),
            size: raw.length,
            codec: 'deflate' as const,
            data: deflateSync(raw),
          },
        };
      }),
    ]);
    await tx.contents.fill(pending as PendingContent[], 1 << 30, 2000);
  });
  const read = await edge.outbox!.read(sessionId, { maxEntries: 500, maxBytes: 1 << 22 });
  const parsed = parseEdgeBatch(
    { database_id: 'abcdef0123456789', session_id: sessionId, entries: read.entries, blobs: read.blobs },
    { maxContentBytes: 1 << 30 },
  );
  return {
    edge: 'laptop',
    sessionId,
    databaseId: parsed.databaseId,
    readSeq: read.readSeq,
    entries: parsed.entries,
    blobs: parsed.blobs,
    now: 3000,
    contentMaxBytes: 1 << 30,
  };
}

/** What a centre holds of a session, through the store interface (engine-independent). */
async function held(s: Store | SqliteStore, sessionId: string) {
  const changes = await s.changes.listForSession(sessionId);
  return {
    session: await s.sessions.get(sessionId),
    messages: await s.messages.page(sessionId, 100, null),
    runs: await s.runs.listRuns(sessionId),
    changes,
    files: await s.changes.filesWithPatches(sessionId, 'run:r1'),
    contents: [...(await s.contents.forChange(sessionId, 'run:r1')).values()].sort((a, b) =>
      a.fileId.localeCompare(b.fileId),
    ),
    stats: await s.contents.stats(1 << 30),
    owner: await s.ingest.ownerOf(sessionId),
  };
}

const engines: [string, () => Promise<Store | SqliteStore>][] = [
  ['SQLite', async () => sqlite()],
  ['PostgreSQL', postgres],
];

describe.each(engines)('ingest on %s', (_name, open) => {
  it('stores the batch as the edge stored it, and the same batch again changes nothing', async () => {
    const centre = await open();
    const batch = await edgeBatch();
    const first = await centre.ingest.apply(batch);
    expect(first.ok).toBe(true);
    const once = await held(centre, 's1');
    expect(once.session).toMatchObject({ id: 's1', title: 'edge run', run_count: 1 });
    expect(once.messages).toHaveLength(1);
    expect(once.runs).toMatchObject([{ run_id: 'r1', status: 'completed' }]);
    expect(once.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
    expect(once.changes[0]).toMatchObject({ total_additions: 40, total_deletions: 0 });
    expect(once.contents.map((c) => c.after.reason ?? c.after.sha256)).toEqual(
      expect.arrayContaining(['too_large', expect.stringMatching(/^[0-9a-f]{64}$/)]),
    );
    expect(once.stats.blobs).toBe(1);
    expect(once.owner).toBe('laptop');
    const again = await centre.ingest.apply(batch);
    expect(again.ok && again.effects.every((e) => e.action === 'unchanged')).toBe(true);
    expect(await held(centre, 's1')).toEqual(once);
  });

  it('a content over the centre`s budget is recorded as budget, the rest of the batch stored', async () => {
    const centre = await open();
    const batch = await edgeBatch();
    const out = await centre.ingest.apply({ ...batch, contentMaxBytes: 1 });
    expect(out.ok).toBe(true);
    const got = await held(centre, 's1');
    expect(got.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
    expect(got.contents.map((c) => c.after.reason).sort()).toEqual(['budget', 'too_large']);
    expect(got.stats.blobs).toBe(0);
  });

  it('a change of 450 files, each with a content of its own, is stored whole, its blobs once', async () => {
    const centre = await open();
    const batch = await edgeBatch('s1', 450);
    expect((await centre.ingest.apply(batch)).ok).toBe(true);
    const got = await held(centre, 's1');
    expect(got.files).toHaveLength(452);
    expect(got.contents.filter((c) => c.after.sha256 !== null)).toHaveLength(451);
    expect(got.stats.blobs).toBe(451);
    const again = await centre.ingest.apply(batch);
    expect(again.ok && again.effects.every((e) => e.action === 'unchanged')).toBe(true);
    expect(await held(centre, 's1')).toEqual(got);
  });

  it('refuses a batch missing a content it does not hold, and one for a session of another edge, storing nothing', async () => {
    const centre = await open();
    const batch = await edgeBatch();
    const missing = await centre.ingest.apply({ ...batch, blobs: new Map() });
    expect(missing).toMatchObject({ ok: false, reason: 'missing_blobs' });
    expect(await centre.sessions.get('s1')).toBeNull();
    expect(await centre.ingest.ownerOf('s1')).toBeNull();
    expect((await centre.ingest.apply(batch)).ok).toBe(true);
    const other = await centre.ingest.apply({ ...batch, edge: 'ci' });
    expect(other).toMatchObject({ ok: false, reason: 'session_owned_elsewhere', owner: 'laptop' });
  });
});
