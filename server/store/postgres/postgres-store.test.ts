import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test-support/postgres.ts';
import { createTempDir } from '../../test-support/temp-repo.ts';
import { storageFailure } from '../errors.ts';
import { MIGRATIONS_DIR, openDatabase, openStore, readMigrations, type PendingContent } from '../index.ts';
import type { ChangeSummary } from '../../../shared/index.ts';
import type { Store } from '../types.ts';
import { applyPgMigrations, openPostgresStore, PG_MIGRATIONS_DIR } from './index.ts';
import { storedChange as change, storedFile as file } from '../../test-support/store-fixtures.ts';

let db: TestDatabase;
const stores: Store[] = [];
const cleanups: (() => void | Promise<void>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A store on a fresh database of its own. */
async function freshStore(): Promise<Store> {
  const own = await createTestDatabase();
  cleanups.push(() => own.drop());
  const s = await openPostgresStore(own.url);
  stores.unshift(s);
  return s;
}

/** The old synchronous SQLite store on a temp file: the reference answers. */
function sqliteStore() {
  const dir = createTempDir();
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const s = openStore(path.join(dir, 'rundiff.db'));
  cleanups.push(() => s.close());
  return s;
}

async function admin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A raw pool on a test database, ended before the database is dropped. */
function testPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url });
  // The drop that follows a test ends any connection still closing: not an error of the test.
  pool.on('error', () => {});
  cleanups.push(() => pool.end());
  return pool;
}

/** Column names per table, and index names, of a PostgreSQL schema. */
async function pgSchema(url: string) {
  return admin(url, async (c) => {
    const cols = await c.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    const idx = await c.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname LIKE 'idx_%'`,
    );
    const tables: Record<string, string[]> = {};
    for (const r of cols.rows) (tables[r.table_name] ??= []).push(r.column_name);
    for (const t of Object.values(tables)) t.sort();
    return { tables, indexes: idx.rows.map((r) => r.indexname).sort() };
  });
}

describe('PostgreSQL migrations', () => {
  it('every SQLite migration has a PostgreSQL edition with the same number and name', () => {
    const sqlite = readMigrations(MIGRATIONS_DIR).map((m) => `${m.version}_${m.name}`);
    const postgres = readMigrations(PG_MIGRATIONS_DIR).map((m) => `${m.version}_${m.name}`);
    expect(postgres).toEqual(sqlite);
  });

  it('give the same tables, columns and indexes as the SQLite schema (plus the database write clock; each its own text index)', async () => {
    const own = await createTestDatabase();
    cleanups.push(() => own.drop());
    const pool = testPool(own.url);
    await applyPgMigrations(pool);
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const lite = openDatabase(path.join(dir, 'x.db'));
    cleanups.push(() => void lite.close());
    const liteTables: Record<string, string[]> = {};
    for (const { name } of lite
      // search_fts, search_paths_fts and their shadow tables are SQLite's text indexes (FTS5);
      // PostgreSQL's are one index each.
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'sqlite_sequence' AND name NOT LIKE 'search_fts%' AND name NOT LIKE 'search_paths_fts%'",
      )
      .all() as { name: string }[])
      liteTables[name] = (lite.prepare(`PRAGMA table_info(${name})`).all() as { name: string }[])
        .map((c) => c.name)
        .sort();
    const liteIndexes = (
      lite.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'idx_%'").all() as {
        name: string;
      }[]
    )
      .map((r) => r.name)
      .sort();
    const { tables, indexes } = await pgSchema(own.url);
    expect(tables).toEqual({ ...liteTables, session_versions: ['session_id', 'version'] });
    expect(indexes).toEqual([...liteIndexes, 'idx_search_docs_text', 'idx_search_docs_paths'].sort());
  });

  it('are recorded once; a second start applies nothing; two replicas starting together both come up', async () => {
    const own = await createTestDatabase();
    cleanups.push(() => own.drop());
    const [a, b] = await Promise.all([openPostgresStore(own.url), openPostgresStore(own.url)]);
    stores.push(a, b);
    const versions = await admin(own.url, (c) => c.query('SELECT version FROM schema_migrations ORDER BY version'));
    expect(versions.rows.map((r: { version: number }) => r.version)).toEqual(
      readMigrations(PG_MIGRATIONS_DIR).map((m) => m.version),
    );
    const pool = testPool(own.url);
    expect(await applyPgMigrations(pool)).toEqual([]);
  });

  it('refuses a database written by a newer schema', async () => {
    const own = await createTestDatabase();
    cleanups.push(() => own.drop());
    stores.push(await openPostgresStore(own.url));
    await admin(own.url, (c) =>
      c.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'future', 0)"),
    );
    await expect(openPostgresStore(own.url)).rejects.toThrow(/newer than this rundiff knows/);
  });

  it('a failing migration leaves the previous version intact', async () => {
    const own = await createTestDatabase();
    cleanups.push(() => own.drop());
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.writeFileSync(path.join(dir, '0001_a.sql'), 'CREATE TABLE a (x INT);');
    fs.writeFileSync(path.join(dir, '0002_b.sql'), 'CREATE TABLE b (x INT); SELECT no_such_function();');
    const pool = testPool(own.url);
    await expect(applyPgMigrations(pool, dir)).rejects.toThrow(/migration 2 \(b\) failed/);
    const tables = await pool.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1");
    expect(tables.rows.map((r: { tablename: string }) => r.tablename)).toEqual(['a', 'schema_migrations']);
  });
});

describe('PostgreSQL store: transactions', () => {
  it('a failure while storing the file rows leaves no summary behind, as storage_failed', async () => {
    const s = await freshStore();
    await s.sessions.touch('s1', 1);
    const bad = file('b.txt', { change_type: 'nonsense' as never });
    const err = await s.changes.insert(change('s1', 'r1', 10), [file('a.txt'), bad], 10).catch((e: unknown) => e);
    expect(storageFailure(err, 'storing a change')?.code).toBe('storage_failed');
    expect(await s.changes.exists('s1', 'run:r1')).toBe(false);
    // Positive control: the same change without the bad row is stored whole.
    await s.changes.insert(change('s1', 'r1', 10), [file('a.txt'), file('b.txt')], 10);
    expect((await s.changes.get('s1', 'run:r1'))?.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
  });

  it('transaction commits what fn wrote, rolls it all back when fn rejects, and a nested rejection undoes only the inner part', async () => {
    const s = await freshStore();
    await expect(
      s.transaction(async (tx) => {
        await tx.sessions.touch('gone', 1);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await s.sessions.exists('gone')).toBe(false);

    await s.transaction(async (tx) => {
      await tx.sessions.touch('outer', 1);
      await tx
        .transaction(async (inner) => {
          await inner.sessions.touch('inner', 1);
          throw new Error('inner');
        })
        .catch(() => {});
      // Reads inside see the transaction's own writes.
      expect(await tx.sessions.exists('outer')).toBe(true);
    });
    expect(await s.sessions.exists('outer')).toBe(true);
    expect(await s.sessions.exists('inner')).toBe(false);
  });

  it('another replica sees a transaction whole or not at all', async () => {
    const own = await freshStoreUrl();
    const s = await openPostgresStore(own.url);
    const other = await openPostgresStore(own.url);
    stores.push(s, other);
    let seenInside: (ChangeSummary | null)[] = [];
    await s.transaction(async (tx) => {
      await tx.sessions.touch('t', 1);
      await tx.changes.insert(change('t', 'r1', 10), [file('a.txt'), file('b.txt')], 10);
      seenInside = [await other.changes.get('t', 'run:r1')];
    });
    expect(seenInside).toEqual([null]);
    expect((await other.changes.get('t', 'run:r1'))?.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
  });

  it('close waits for an open transaction to end', async () => {
    const s = await openPostgresStore((await freshStoreUrl()).url);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const tx = s.transaction(async (t) => {
      await t.sessions.touch('late', 1);
      await gate;
    });
    await new Promise((r) => setImmediate(r));
    const closed = s.close();
    release();
    await tx;
    await closed;
    await expect(s.sessions.exists('late')).rejects.toThrow();
  });
});

async function freshStoreUrl(): Promise<TestDatabase> {
  const own = await createTestDatabase();
  cleanups.push(() => own.drop());
  return own;
}

describe('PostgreSQL store: the write clock', () => {
  it('a write through one replica moves the version another replica reads; a rolled-back write does not', async () => {
    const own = await freshStoreUrl();
    const a = await openPostgresStore(own.url);
    const b = await openPostgresStore(own.url);
    stores.push(a, b);
    const v0 = await b.clock.version('s');
    await a.sessions.touch('s', 1);
    const v1 = await b.clock.version('s');
    expect(v1).not.toBe(v0);
    // Another session's write leaves this one's version alone.
    await a.sessions.touch('other', 1);
    expect(await b.clock.version('s')).toBe(v1);
    await a
      .transaction(async (tx) => {
        await tx.messages.insert({
          id: 'm',
          session_id: 's',
          role: 'user',
          content: 'x',
          run_id: null,
          tool_call_id: null,
          created_at: 2,
        });
        throw new Error('undo');
      })
      .catch(() => {});
    expect(await b.clock.version('s')).toBe(v1);
    // A write across sessions moves every version.
    await a.changes.deleteOlderThan(0);
    expect(await b.clock.version('s')).not.toBe(v1);
  });
});

describe('PostgreSQL store: the same answers as SQLite', () => {
  it('session pages order ties by id in byte order and filter q as literal, ASCII-case-insensitive text', async () => {
    const p = await freshStore();
    const l = sqliteStore();
    const ids = ['B', 'a', 'é', 'Z', '_x', 'ab%c', 'AB_C', 'Émile', 'émile'];
    for (const [i, id] of ids.entries()) {
      const fields = { title: `${id} title`, workspace: `/w/${id}` };
      await p.sessions.upsert(id, fields, 100 + (i % 2));
      await l.sessions.upsert(id, fields, 100 + (i % 2));
    }
    const filters = [{}, { q: 'ab%' }, { q: 'AB_' }, { q: '%' }, { q: '_' }, { q: 'émile' }, { q: 'É' }, { q: 'b' }];
    for (const filter of filters) {
      for (const limit of [1, 2, 3, 100]) {
        expect(await p.sessions.page(limit, null, filter), JSON.stringify({ filter, limit })).toEqual(
          await l.sessions.page(limit, null, filter),
        );
      }
    }
    expect(await p.sessions.workspaces(3)).toEqual(await l.sessions.workspaces(3));
  });

  it('changes, file pages, counts, runs, messages, viewed marks and reviews read the same, numbers as numbers and flags as booleans', async () => {
    const p = await freshStore();
    const l = sqliteStore();
    const both = async (fn: (s: Store) => unknown) => {
      await fn(p);
      await fn(l);
    };
    await both((s) => s.sessions.upsert('s1', { title: 'one', workspace: '/w' }, 5));
    await both((s) =>
      s.runs.insertRun({
        run_id: 'r1',
        session_id: 's1',
        title: null,
        status: 'running',
        source: 'run',
        workspace: '/w',
        started_at: 6,
        finished_at: null,
        error: null,
        change_id: 'run:r1',
        tracking: true,
        reason: null,
      }),
    );
    await both((s) =>
      s.runs.finish('run', 's1', 'r1', {
        status: 'completed',
        finished_at: 9,
        error: null,
        tracking: true,
        reason: null,
        response: { ok: true } as never,
      }),
    );
    const paths = ['z.txt', 'B.txt', 'a.txt', 'é.txt', 'dir/x', 'dir-y'].sort((x, y) =>
      Buffer.compare(Buffer.from(x), Buffer.from(y)),
    );
    const many = Array.from({ length: 60 }, (_, i) => file(`many/${String(i).padStart(3, '0')}`));
    await both((s) =>
      s.changes.insert(
        change('s1', 'r1', 10, { truncated: true, truncated_reasons: ['max_files'] as never }),
        [...paths.map((x) => file(x, { binary: x === 'B.txt' })), ...many],
        10,
      ),
    );
    await both((s) =>
      s.messages.insert({
        id: 'm1',
        session_id: 's1',
        role: 'user',
        content: 'hi',
        run_id: 'r1',
        tool_call_id: null,
        created_at: 7,
      }),
    );
    const strip = (v: unknown) =>
      JSON.parse(JSON.stringify(v, (k, x: unknown) => (k === 'id' || k === 'file_id' ? '<id>' : x))) as unknown;
    const pc = await p.changes.get('s1', 'run:r1');
    const lc = await l.changes.get('s1', 'run:r1');
    expect(strip(pc)).toEqual(strip(lc));
    expect(pc?.truncated).toBe(true);
    expect(pc?.files_total).toBe(66);
    expect(pc?.files.find((f) => f.path === 'B.txt')?.binary).toBe(true);
    expect(strip(await p.changes.filesPage('s1', 'run:r1', 49, 5))).toEqual(
      strip(await l.changes.filesPage('s1', 'run:r1', 49, 5)),
    );
    expect(strip(await p.changes.listForSession('s1'))).toEqual(strip(await l.changes.listForSession('s1')));
    const ps = await p.sessions.get('s1');
    expect(ps).toEqual(await l.sessions.get('s1'));
    expect(typeof ps?.changed_count).toBe('number');
    expect(await p.runs.getRun('s1', 'r1')).toEqual(await l.runs.getRun('s1', 'r1'));
    expect(await p.runs.listRuns('s1')).toEqual(await l.runs.listRuns('s1'));
    expect(await p.messages.page('s1', 10, null)).toEqual(await l.messages.page('s1', 10, null));
    expect(await p.changes.filesPage('s1', 'nope', -1, 5)).toBeNull();

    // Viewed marks on the same row of each store.
    const pf = (await p.changes.get('s1', 'run:r1'))!.files[0]!.id;
    const lf = (await l.changes.get('s1', 'run:r1'))!.files[0]!.id;
    expect(await p.viewed.mark('s1', 'run:r1', pf, 20)).toBe(await l.viewed.mark('s1', 'run:r1', lf, 20));
    expect(await p.viewed.mark('s1', 'run:r1', pf, 21)).toBe(await l.viewed.mark('s1', 'run:r1', lf, 21));
    expect(strip(await p.viewed.list('s1'))).toEqual(strip(await l.viewed.list('s1')));
    expect(await p.viewed.unmark('s1', 'run:r1', pf)).toBe(await l.viewed.unmark('s1', 'run:r1', lf));

    // Review comments moved into a review and delivered together.
    const comment = (fileId: string) => ({
      id: 'c1',
      session_id: 's1',
      change_id: 'run:r1',
      file_id: fileId,
      path: paths[0]!,
      side: 'after' as const,
      start_line: 1,
      end_line: 1,
      lines: ['x'],
      change_finished_at: 10,
      change_seq: 1,
      body: 'fix',
      state: 'draft' as const,
      review_id: null,
      created_at: 30,
      updated_at: 30,
      delivered_at: null,
      delivered_via: null,
      addressed_at: null,
    });
    await p.reviews.insertComment(comment(pf));
    await l.reviews.insertComment(comment(lf));
    const review = {
      id: 'rv1',
      session_id: 's1',
      note: '',
      mode: 'next_prompt' as const,
      state: 'pending' as const,
      text: 't',
      created_at: 31,
      delivered_at: null,
      delivered_via: null,
      delivered_to: null,
    };
    await both((s) => s.reviews.insertReview(review));
    expect(await p.reviews.sessionsWithPending()).toEqual(await l.reviews.sessionsWithPending());
    expect(await p.reviews.deliver('s1', 'rv1', 40, 'hook', null)).toBe(
      await l.reviews.deliver('s1', 'rv1', 40, 'hook', null),
    );
    expect(await p.reviews.deliver('s1', 'rv1', 41, 'hook', null)).toBe(false);
    expect(strip(await p.reviews.comments('s1'))).toEqual(strip(await l.reviews.comments('s1')));
    expect(await p.reviews.reviews('s1')).toEqual(await l.reviews.reviews('s1'));
    expect(strip(await p.reviews.touches('s1', paths[0]!))).toEqual(strip(await l.reviews.touches('s1', paths[0]!)));

    // Retention: the newest N run-level changes stay.
    for (const r of ['r2', 'r3'])
      await both((s) => s.changes.insert(change('s1', r, r === 'r2' ? 20 : 30), [file('q')], 2));
    expect((await p.changes.listForSession('s1')).map((c) => c.run_id)).toEqual(
      (await l.changes.listForSession('s1')).map((c) => c.run_id),
    );
    expect(await p.sessions.get('s1')).toEqual(await l.sessions.get('s1'));
  });

  it('contents: kept once per sha256, counted by the triggers, evicted oldest first, removed with the last reference', async () => {
    const s = await freshStore();
    await s.sessions.touch('s', 1);
    const prepared = (text: string) => {
      const raw = Buffer.from(text);
      const data = deflateSync(raw);
      return {
        mode: '100644',
        sha256: createHash('sha256').update(raw).digest('hex'),
        size: raw.length,
        codec: 'deflate' as const,
        data,
      };
    };
    const big = prepared('x'.repeat(1000) + 'a');
    const other = prepared('y'.repeat(1000) + 'b');
    await s.changes.insert(change('s', 'r1', 10), [file('a'), file('b')], 10);
    const pending = await s.contents.record('s', 'run:r1', [
      { before: { mode: null }, after: big },
      { before: { mode: null }, after: big },
    ]);
    expect(pending).toHaveLength(2);
    await s.contents.fill(pending as PendingContent[], 10_000, 11);
    const stats = await s.contents.stats(10_000);
    expect(stats).toEqual({ bytes_used: big.data.length, max_bytes: 10_000, blobs: 1 });
    expect((await s.contents.blob(big.sha256))?.toString()).toBe('x'.repeat(1000) + 'a');

    // A budget that holds one content: the newer change evicts the older one's.
    await s.changes.insert(change('s', 'r2', 20), [file('c')], 10);
    const p2 = await s.contents.record('s', 'run:r2', [{ before: { mode: null }, after: other }]);
    await s.contents.fill(p2 as PendingContent[], big.data.length + other.data.length - 1, 21);
    const first = await s.contents.forChange('s', 'run:r1');
    expect([...first.values()].map((c) => c.after.reason)).toEqual(['evicted', 'evicted']);
    expect(await s.contents.blob(big.sha256)).toBeNull();
    expect((await s.contents.stats(0)).blobs).toBe(1);

    await s.sessions.delete('s');
    expect(await s.contents.stats(0)).toEqual({ bytes_used: 0, max_bytes: 0, blobs: 0 });
  });

  it('the call log and the workspace catalog', async () => {
    const s = await freshStore();
    for (let i = 0; i < 5; i++)
      await s.callLog.insert({
        id: `c${i}`,
        tool: 'git_status',
        repository: '/r',
        ok: i % 2 === 0,
        error_code: null,
        duration_ms: 1.5,
        created_at: i,
        arguments: null,
        commit: i === 4 ? { hash: 'h', summary: 'sum' } : null,
      });
    await s.callLog.prune(3);
    const page = await s.callLog.page(10);
    expect(page.map((r) => [r.id, r.ok, r.duration_ms])).toEqual([
      ['c4', true, 1.5],
      ['c3', false, 1.5],
      ['c2', true, 1.5],
    ]);
    expect(page[0]?.commit).toEqual({ hash: 'h', summary: 'sum' });
    await s.sessions.upsert('a', { workspace: '/one' }, 1);
    await s.sessions.upsert('b', { workspace: '/two' }, 2);
    expect(await s.catalog.sessionWorkspaces(10)).toEqual(['/two', '/one']);
    expect(await s.catalog.runWorkspaces(10)).toEqual([]);
  });
});

describe('PostgreSQL store: failures', () => {
  it('a statement waiting past the timeout fails as storage_failed and stores nothing', async () => {
    const own = await freshStoreUrl();
    const s = await openPostgresStore(own.url, { statementTimeoutMs: 300 });
    stores.push(s);
    await s.sessions.touch('locked', 1);
    const holder = new pg.Client({ connectionString: own.url });
    // Ended by the test; the database drop afterwards would otherwise cut it off.
    holder.on('error', () => {});
    await holder.connect();
    onTestFinished(() => holder.end());
    await holder.query('BEGIN');
    await holder.query("SELECT 1 FROM sessions WHERE id = 'locked' FOR UPDATE");
    const err = await s.sessions.upsert('locked', { title: 'new' }, 2).catch((e: unknown) => e);
    const failure = storageFailure(err, 'storing the session');
    expect(failure?.code).toBe('storage_failed');
    expect(failure?.details).toEqual({ postgres_code: '57014' });
    await holder.query('ROLLBACK');
    await holder.end();
    expect((await s.sessions.get('locked'))?.title).toBeNull();
    // Positive control: with the lock gone the same write goes through.
    await s.sessions.upsert('locked', { title: 'new' }, 2);
    expect((await s.sessions.get('locked'))?.title).toBe('new');
  });

  it('an unreachable server is a storage failure that names the cause', async () => {
    const err = await openPostgresStore('postgres://postgres@127.0.0.1:1/none', { connectTimeoutMs: 2_000 }).catch(
      (e: unknown) => e,
    );
    const failure = storageFailure(err, 'opening the store');
    expect(failure?.code).toBe('storage_failed');
    expect(failure?.message).toMatch(/ECONNREFUSED/);
    // Not every error is a storage failure.
    expect(storageFailure(new Error('plain'), 'x')).toBeNull();
  });
});
