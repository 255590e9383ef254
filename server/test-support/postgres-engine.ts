import pg from 'pg';
import { onTestFinished } from 'vitest';
import { openPostgresStore } from '../store/postgres/index.ts';
import type { Store } from '../store/types.ts';
import { createTestDatabase, postgresBinDir } from './postgres.ts';

/** Pools used only to count rows, one per store a test opened. */
const readers = new WeakMap<Store, pg.Pool>();

/** A fresh store on a database of its own (on this test process's PostgreSQL), removed when the test ends. */
export async function openPostgresTestStore(): Promise<Store> {
  const db = await createTestDatabase();
  const store = await openPostgresStore(db.url);
  const reader = new pg.Pool({ connectionString: db.url, max: 1 });
  // The drop at the end of the test ends this pool's connection: not an error of the test.
  reader.on('error', () => {});
  readers.set(store, reader);
  onTestFinished(async () => {
    await store.close();
    await reader.end();
    await db.drop();
  });
  return store;
}

/** Rows in one table of a store opened by `openPostgresTestStore`. */
export async function countPostgresRows(store: Store, table: string): Promise<number> {
  const reader = readers.get(store);
  if (!reader) throw new Error('this PostgreSQL store was not opened by the test support');
  const { rows } = await reader.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${table}`);
  return Number(rows[0]!.n);
}

/**
 * Whether the PostgreSQL engine runs in this test run: when Debian's server programs are installed
 * (CI installs them). On CI their absence fails the run instead of skipping the engine.
 */
export function postgresAvailable(): boolean {
  try {
    postgresBinDir();
    return true;
  } catch (err) {
    if (process.env.CI) throw err;
    process.stderr.write(`rundiff tests: the PostgreSQL engine is skipped: ${(err as Error).message}\n`);
    return false;
  }
}
