import pg from 'pg';
import { onTestFinished } from 'vitest';
import { applyPgMigrations, openPostgresStore } from '../store/postgres/index.ts';
import { createPostgresExecutor, TYPES } from '../store/sql/postgres.ts';
import type { Executor } from '../store/sql/types.ts';
import type { Store } from '../store/types.ts';
import { createTestDatabase, postgresBinDir, postgresOff } from './postgres.ts';

/** The database URL of each PostgreSQL store a test opened, so a test can read its rows. */
const urls = new WeakMap<Store, string>();

/** Remembers where `store` keeps its rows (the test server harness calls it for its stores). */
export function registerPostgresStore(store: Store, url: string): void {
  urls.set(store, url);
}

/** A fresh store on a database of its own (on this test process's PostgreSQL), removed when the test ends. */
export async function openPostgresTestStore(): Promise<Store> {
  const db = await createTestDatabase();
  const store = await openPostgresStore(db.url);
  registerPostgresStore(store, db.url);
  onTestFinished(async () => {
    await store.close();
    await db.drop();
  });
  return store;
}

/** The store's executor over a fresh migrated database of its own, closed and removed when the test ends. */
export async function openPostgresTestExecutor(): Promise<Executor> {
  const db = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 4, types: TYPES });
  // The database is dropped with its connections ended: an idle one's end is no test failure.
  pool.on('error', () => {});
  await applyPgMigrations(pool);
  const sql = createPostgresExecutor(pool);
  onTestFinished(async () => {
    await sql.close();
    await db.drop();
  });
  return sql;
}

/** The rows `sql` selects in a PostgreSQL store a test opened (through a connection of its own). */
export async function selectPostgresRows<T>(store: Store, sql: string, params: readonly unknown[] = []): Promise<T[]> {
  const url = urls.get(store);
  if (!url) throw new Error('this PostgreSQL store was not opened by the test support');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, [...params])).rows as T[];
  } finally {
    await client.end();
  }
}

/** Rows in one table of a store opened by the test support. */
export async function countPostgresRows(store: Store, table: string): Promise<number> {
  const rows = await selectPostgresRows<{ n: string }>(store, `SELECT COUNT(*) AS n FROM ${table}`);
  return Number(rows[0]!.n);
}

/**
 * Whether the PostgreSQL engine runs in this test run: when Debian's server programs are installed
 * (CI installs them) and the run does not leave it out (`RUNDIFF_TEST_POSTGRES=off`, the quick
 * run). On CI their absence fails the run instead of skipping the engine.
 */
export function postgresAvailable(): boolean {
  if (postgresOff()) return false;
  try {
    postgresBinDir();
    return true;
  } catch (err) {
    if (process.env.CI) throw err;
    process.stderr.write(`rundiff tests: the PostgreSQL engine is skipped: ${(err as Error).message}\n`);
    return false;
  }
}
