import { createCallLogStore } from './call-log.ts';
import { createCatalogStore } from './catalog.ts';
import { createChangeStore } from './changes.ts';
import { createContentStore } from './contents.ts';
import type { Db } from './database.ts';
import { createGate, type Gate } from './sql/gate.ts';
import { createIngestStore } from './ingest.ts';
import { createMessageStore } from './messages.ts';
import { createOutboxStore } from './outbox.ts';
import { createReviewStore } from './reviews.ts';
import { createRunStore } from './runs.ts';
import { createSessionStore } from './sessions.ts';
import type {
  CallLogApi,
  CatalogApi,
  ChangesApi,
  ContentsApi,
  IngestApi,
  MessagesApi,
  OutboxApi,
  ReviewsApi,
  RunsApi,
  SessionsApi,
  Store,
  StoreTx,
  ViewedApi,
} from './types.ts';
import { createViewedStore } from './viewed.ts';
import { createWriteClock } from './write-clock.ts';

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

/** The synchronous modules over one connection; statements are prepared once here. */
function createModules(db: Db) {
  const clock = createWriteClock(db);
  return {
    clock,
    sessions: createSessionStore(db, clock),
    messages: createMessageStore(db, clock),
    runs: createRunStore(db, clock),
    changes: createChangeStore(db, clock),
    contents: atomic(db, createContentStore(db), ['record', 'fill', 'settlePending', 'markUnavailable']),
    viewed: createViewedStore(db),
    reviews: atomic(db, createReviewStore(db, clock), ['insertReview', 'splitReview', 'deliver']),
    callLog: createCallLogStore(db),
    catalog: createCatalogStore(db),
    outbox: createOutboxStore(db),
    ingest: createIngestStore(db, clock),
  };
}

type Modules = ReturnType<typeof createModules>;
type Runner = <T>(op: () => T) => Promise<T>;

/** A module whose every method runs through `run` and answers a promise. */
function bind<Api>(mod: object, run: Runner): Api {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(mod)) {
    if (typeof fn !== 'function') continue;
    const call = fn as (...args: unknown[]) => unknown;
    out[name] = (...args: unknown[]) => run(() => call(...args));
  }
  return out as Api;
}

function bindAll(m: Modules, run: Runner): Omit<StoreTx, 'transaction'> {
  return {
    sessions: bind<SessionsApi>(m.sessions, run),
    messages: bind<MessagesApi>(m.messages, run),
    runs: bind<RunsApi>(m.runs, run),
    changes: bind<ChangesApi>(m.changes, run),
    contents: bind<ContentsApi>(m.contents, run),
    viewed: bind<ViewedApi>(m.viewed, run),
    reviews: bind<ReviewsApi>(m.reviews, run),
    callLog: bind<CallLogApi>(m.callLog, run),
    catalog: bind<CatalogApi>(m.catalog, run),
    ingest: bind<IngestApi>(m.ingest, run),
    outbox: bind<OutboxApi>(m.outbox, run),
    clock: {
      version: (sessionId) => run(() => m.clock.version(sessionId)),
      partVersion: (sessionId, part) => run(() => m.clock.partVersion(sessionId, part)),
      bump: (sessionId, part) => run(() => m.clock.bump(sessionId, part)),
    },
  };
}

/**
 * The store over one better-sqlite3 connection. Statements are synchronous, so a plain call is
 * atomic by itself; a transaction's body awaits, so it holds the gate (`gate.ts`) from BEGIN to
 * COMMIT and other flows' calls wait for it rather than running inside it.
 */
export function createStore(db: Db, opts: { gate?: Gate } = {}): SqliteStore {
  const m = createModules(db);
  // A gate is passed only by the test that shows what happens without serialising.
  const gate = opts.gate ?? createGate();
  const plain = bindAll(m, gate.run);
  let savepoints = 0;

  /** Runs `fn` between `open` and `commit` (or `rollback` when it rejects), with modules usable only meanwhile. */
  async function within<T>(
    fn: (tx: StoreTx) => Promise<T>,
    steps: { open: string; commit: string; rollback: string },
  ): Promise<T> {
    db.exec(steps.open);
    let live = true;
    const ended = () => Promise.reject(new Error("a transaction's store was used after the transaction ended"));
    const direct: Runner = (op) => {
      if (!live) return ended();
      try {
        return Promise.resolve(op());
      } catch (err) {
        return Promise.reject(err as Error);
      }
    };
    const tx: StoreTx = { ...bindAll(m, direct), transaction: (inner) => (live ? nested(inner) : ended()) };
    const undo = () => {
      live = false;
      // A failed statement (a full disk) may already have rolled the whole transaction back.
      if (db.inTransaction) db.exec(steps.rollback);
    };
    let result: T;
    try {
      result = await fn(tx);
    } catch (err) {
      undo();
      throw err;
    }
    live = false;
    try {
      db.exec(steps.commit);
    } catch (err) {
      undo();
      throw err;
    }
    return result;
  }

  function nested<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    const name = `rundiff_sp${++savepoints}`;
    return within(fn, {
      open: `SAVEPOINT ${name}`,
      commit: `RELEASE ${name}`,
      rollback: `ROLLBACK TO ${name}; RELEASE ${name}`,
    });
  }

  return {
    engine: 'sqlite',
    db,
    ...plain,
    transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
      const run = () =>
        within(fn, { open: 'BEGIN', commit: 'COMMIT', rollback: 'ROLLBACK' }).finally(() => gate.release());
      // A free gate is taken at once: the transaction begins within this call, as a plain call would run.
      return gate.tryAcquire() ? run() : gate.acquire().then(run);
    },
    close: () =>
      gate.run(() => {
        if (db.open) db.close();
      }),
  };
}
