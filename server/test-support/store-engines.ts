import fs from 'node:fs';
import path from 'node:path';
import { describe, onTestFinished } from 'vitest';
import { openDatabase, openStore, type SqliteStore, type Store, type StoreEngine } from '../store/index.ts';
import { createSqliteExecutor } from '../store/sql/sqlite.ts';
import type { Executor } from '../store/sql/types.ts';
import {
  countPostgresRows,
  openPostgresTestExecutor,
  openPostgresTestStore,
  postgresAvailable,
  selectPostgresRows,
} from './postgres-engine.ts';
import { createTempDir } from './temp-repo.ts';

/**
 * The store engines the store-level suites run on: each gives a fresh, empty, migrated store per
 * test (closed and removed when the test ends) and reads the rows a test checks. SQLite is always
 * there; another engine joins the list when its server is available to the tests.
 */
export interface EngineUnderTest {
  name: StoreEngine;
  /** A fresh empty store, closed and removed when the test finishes. */
  open(): Promise<Store>;
  /** Rows in one table (tests check what a step stored or removed). */
  count(store: Store, table: string): Promise<number>;
  /** The executor the store's modules run on, over a fresh empty migrated database, closed when the test finishes. */
  openSql(): Promise<Executor>;
}

/** The SQLite connection behind a store, for tests of SQLite itself (pragmas, query plans). */
export function sqliteDb(store: Store): SqliteStore['db'] {
  if (store.engine !== 'sqlite') throw new Error(`this test reads SQLite directly; the store is ${store.engine}`);
  return (store as SqliteStore).db;
}

const sqlite: EngineUnderTest = {
  name: 'sqlite',
  open() {
    const dir = createTempDir();
    const store = openStore(path.join(dir, 'rundiff.db'));
    onTestFinished(async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    return Promise.resolve(store);
  },
  count(store, table) {
    const row = sqliteDb(store).prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number };
    return Promise.resolve(row.n);
  },
  openSql() {
    const dir = createTempDir();
    const sql = createSqliteExecutor(openDatabase(path.join(dir, 'rundiff.db')));
    onTestFinished(async () => {
      await sql.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    return Promise.resolve(sql);
  },
};

const postgres: EngineUnderTest = {
  name: 'postgres',
  open: openPostgresTestStore,
  count: countPostgresRows,
  openSql: openPostgresTestExecutor,
};

/** Every engine available to this test run: SQLite, and PostgreSQL where its programs are installed. */
export const STORE_ENGINES: readonly EngineUnderTest[] = postgresAvailable() ? [sqlite, postgres] : [sqlite];

/** Runs `suite` once per available engine, titled with the engine's name. */
export function describeEachEngine(title: string, suite: (engine: EngineUnderTest) => void): void {
  describe.each(STORE_ENGINES.map((e) => ({ engine: e, name: e.name })))(`${title} ($name)`, ({ engine }) =>
    suite(engine),
  );
}

/** Rows in a table of the store a test server uses (its engine's way). */
export function countRows(store: Store, table: string): Promise<number> {
  const engine = STORE_ENGINES.find((e) => e.name === store.engine);
  if (!engine) throw new Error(`no test support for the ${store.engine} store`);
  return engine.count(store, table);
}

/**
 * The rows `sql` selects in the store a test server uses (a plain SELECT both engines read alike),
 * with `?` placeholders for `params`.
 */
export function selectRows<T>(store: Store, sql: string, params: readonly unknown[] = []): Promise<T[]> {
  if (store.engine === 'postgres') return selectPostgresRows<T>(store, numberedPlaceholders(sql), params);
  return Promise.resolve(
    sqliteDb(store)
      .prepare(sql)
      .all(...params) as T[],
  );
}

/** Runs one statement that returns no rows (a test altering what a server stored), both engines. */
export async function executeSql(store: Store, sql: string, params: readonly unknown[] = []): Promise<void> {
  if (store.engine === 'postgres') await selectPostgresRows(store, numberedPlaceholders(sql), params);
  else
    sqliteDb(store)
      .prepare(sql)
      .run(...params);
}

/** SQLite's `?` placeholders as PostgreSQL's `$1, $2, ...` (the tests' statements hold no `?` in text). */
function numberedPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
