import { buildStore } from './build.ts';
import type { Db } from './database.ts';
import { createOutboxStore } from './outbox.ts';
import { createCounters, createSqliteClock } from './sql/clock.ts';
import type { Gate } from './sql/gate.ts';
import { createSqliteExecutor } from './sql/sqlite.ts';
import type { Store } from './types.ts';

/** The SQLite store: the interface, plus the connection for tools and tests that read it directly. */
export interface SqliteStore extends Store {
  readonly engine: 'sqlite';
  readonly db: Db;
}

/**
 * The store over one better-sqlite3 connection: the executor (`sql/sqlite.ts`: statements run
 * synchronously, a transaction holds the gate from BEGIN to COMMIT) and SQLite's write clock.
 */
export function createStore(db: Db, opts: { gate?: Gate } = {}): SqliteStore {
  const sql = createSqliteExecutor(db, opts);
  const store = buildStore(sql, createSqliteClock(createCounters()), (q) => ({ outbox: createOutboxStore(q) }));
  return { ...store, engine: 'sqlite', db };
}
