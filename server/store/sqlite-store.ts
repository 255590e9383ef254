import { buildStore, type EngineModules } from './build.ts';
import { createContentStore } from './contents.ts';
import type { Db } from './database.ts';
import { createOutboxStore } from './outbox.ts';
import { createCounters, createSqliteClock } from './sql/clock.ts';
import type { Gate } from './sql/gate.ts';
import { createSqliteExecutor, runnerOf, type Runner } from './sql/sqlite.ts';
import type { ContentsApi, Store } from './types.ts';

/** The SQLite store: the interface, plus the connection for tools and tests that read it directly. */
export interface SqliteStore extends Store {
  readonly engine: 'sqlite';
  readonly db: Db;
}

/**
 * Methods of more than one write statement run in a transaction of their own (a savepoint inside a
 * caller's), so each method is one atomic step as the interface promises.
 */
function atomic<M extends object>(db: Db, mod: M, names: readonly (keyof M & string)[]): M {
  const out = { ...mod };
  for (const name of names) {
    const fn = mod[name] as (...args: unknown[]) => unknown;
    (out as Record<string, unknown>)[name] = db.transaction((...args: unknown[]) => fn(...args));
  }
  return out;
}

/** The synchronous modules not yet written over the executor; statements are prepared once here. */
function createSyncModules(db: Db) {
  return {
    contents: atomic(db, createContentStore(db), ['record', 'fill', 'settlePending', 'markUnavailable']),
  };
}

type SyncModules = ReturnType<typeof createSyncModules>;

/** A synchronous module whose every method runs through `run` and answers a promise. */
function bind<Api>(mod: object, run: Runner): Api {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(mod)) {
    if (typeof fn !== 'function') continue;
    const call = fn as (...args: unknown[]) => unknown;
    out[name] = (...args: unknown[]) => run(() => call(...args));
  }
  return out as Api;
}

function bindAll(m: SyncModules, run: Runner): Omit<ReturnType<EngineModules>, 'outbox'> {
  return {
    contents: bind<ContentsApi>(m.contents, run),
  };
}

/**
 * The store over one better-sqlite3 connection: the executor (`sql/sqlite.ts`: statements run
 * synchronously, a transaction holds the gate from BEGIN to COMMIT) and SQLite's write clock.
 */
export function createStore(db: Db, opts: { gate?: Gate } = {}): SqliteStore {
  const sql = createSqliteExecutor(db, opts);
  const counters = createCounters();
  const sync = createSyncModules(db);
  const store = buildStore(sql, createSqliteClock(counters), (q) => ({
    ...bindAll(sync, runnerOf(q)),
    outbox: createOutboxStore(q),
  }));
  return { ...store, engine: 'sqlite', db };
}
