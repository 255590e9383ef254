import type Database from 'better-sqlite3';
import { SQLITE } from './dialect.ts';
import { createGate, type Gate } from './gate.ts';
import { TX_ENDED, type Executor, type Param, type Sql, type Step } from './types.ts';

type Db = Database.Database;
type Statement = Database.Statement<unknown[], unknown>;

/** Runs a synchronous operation on the connection, its result or throw as a promise. */
export type Runner = <T>(op: () => T) => Promise<T>;

/** The SQLite executor: the connection and its gate, besides the executor itself. */
export interface SqliteExecutor extends Executor {
  readonly db: Db;
}

// The runner behind each executor: the store's modules not yet written over `Sql` run through it.
const runners = new WeakMap<Sql, Runner>();

/** How synchronous code runs where `sql` runs its statements (through the gate at the top level). */
export function runnerOf(sql: Sql): Runner {
  const r = runners.get(sql);
  if (!r) throw new Error('not a SQLite executor');
  return r;
}

const settle = <T>(op: () => T): Promise<T> => {
  try {
    return Promise.resolve(op());
  } catch (err) {
    return Promise.reject(err as Error);
  }
};

// better-sqlite3 binds Buffers as BLOBs; another Uint8Array is bound as one too.
const bindable = (params: readonly Param[]): unknown[] => {
  for (const p of params) if (p instanceof Uint8Array && !Buffer.isBuffer(p)) return params.map(toBuffer);
  return params as unknown[];
};
const toBuffer = (p: Param): unknown =>
  p instanceof Uint8Array && !Buffer.isBuffer(p) ? Buffer.from(p.buffer, p.byteOffset, p.byteLength) : p;

function newStep(memo: Set<string>): Step & { settled(): Promise<unknown> } {
  const pending: Promise<unknown>[] = [];
  return {
    memo,
    defer(statement) {
      // Awaited before the commit; a failure meanwhile is the step's own.
      statement.catch(() => undefined);
      pending.push(statement);
    },
    settled: () => Promise.all(pending),
  };
}

/**
 * One better-sqlite3 connection as the store's executor. Statements are prepared once per text and
 * run synchronously: while the gate is free a statement runs inside the call. An atomic step, a
 * read of several statements and a transaction hold the gate from their first statement to their
 * last (BEGIN to COMMIT), so statements of other flows wait instead of running inside them.
 */
export function createSqliteExecutor(db: Db, opts: { gate?: Gate } = {}): SqliteExecutor {
  // A gate is passed only by the test that shows what happens without serialising.
  const gate = opts.gate ?? createGate();
  const statements = new Map<string, Statement>();
  const prepare = (text: string): Statement => {
    let s = statements.get(text);
    if (!s) statements.set(text, (s = db.prepare(text)));
    return s;
  };
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  let savepoints = 0;

  const all = <R>(text: string, params: readonly Param[] = []): R[] => prepare(text).all(...bindable(params)) as R[];
  const get = <R>(text: string, params: readonly Param[] = []): R | undefined =>
    prepare(text).get(...bindable(params)) as R | undefined;
  const run = (text: string, params: readonly Param[] = []): number => prepare(text).run(...bindable(params)).changes;
  const runMany = (text: string, rows: readonly (readonly Param[])[]): number => {
    const s = prepare(text);
    let n = 0;
    for (const r of rows) n += s.run(...bindable(r)).changes;
    return n;
  };
  const runManyAtomic = db.transaction(runMany);

  /** Runs `fn` between `open` and `close` (or `undo` when it rejects) with an executor live only meanwhile. */
  async function within<T>(
    fn: (q: Sql) => Promise<T>,
    memo: Set<string>,
    steps: { open(): void; close(): void; undo(): void },
  ): Promise<T> {
    steps.open();
    let live = true;
    const step = newStep(memo);
    const q = held(() => live, step, true);
    const undo = () => {
      live = false;
      // A failed statement (a full disk) may already have rolled the whole transaction back.
      if (db.inTransaction) steps.undo();
    };
    let result: T;
    try {
      result = await fn(q);
      await step.settled();
    } catch (err) {
      undo();
      throw err;
    }
    live = false;
    try {
      steps.close();
    } catch (err) {
      undo();
      throw err;
    }
    return result;
  }

  const transactionSteps = {
    open: () => begin.run(),
    close: () => commit.run(),
    undo: () => rollback.run(),
  };

  function savepoint<T>(fn: (q: Sql) => Promise<T>, memo: Set<string>): Promise<T> {
    const name = `rundiff_sp${++savepoints}`;
    return within(fn, memo, {
      open: () => db.exec(`SAVEPOINT ${name}`),
      // The transaction holding it can only have ended meanwhile without the gate (a test's).
      close: () => {
        if (db.inTransaction) db.exec(`RELEASE ${name}`);
      },
      undo: () => {
        db.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
        // What a writer noted in the undone part must be done again by the next write.
        memo.clear();
      },
    });
  }

  /** The executor while this flow holds the gate: statements run at once; `inTx`: a transaction is open. */
  function held(live: () => boolean, step: Step | null, inTx: boolean): Sql {
    const ended = () => Promise.reject(new Error(TX_ENDED));
    const direct: Runner = (op) => (live() ? settle(op) : ended());
    const nest = <T>(fn: (q: Sql) => Promise<T>): Promise<T> => {
      if (!live()) return ended();
      return inTx ? savepoint(fn, step!.memo) : within(fn, new Set(), transactionSteps);
    };
    const q: Sql = {
      dialect: SQLITE,
      step,
      all: (text, params) => direct(() => all(text, params)),
      get: (text, params) => direct(() => get(text, params)),
      run: (text, params) => direct(() => run(text, params)),
      runMany: (text, rows) => direct(() => (inTx ? runMany(text, rows) : runManyAtomic(text, rows))),
      atomic: nest,
      read: (fn) => (live() ? fn(q) : ended()),
      transaction: nest,
    };
    runners.set(q, direct);
    return q;
  }

  /** Runs `op` holding the gate: at once when it is free (within this call), else after those before it. */
  function holding<T>(op: () => Promise<T>): Promise<T> {
    const go = () => op().finally(() => gate.release());
    return gate.tryAcquire() ? go() : gate.acquire().then(go);
  }

  // A step at the top level is a transaction of its own; were one open all the same (a test's gate
  // that lets another flow in), a savepoint inside it, as a plain statement would run inside it.
  const own = <T>(fn: (q: Sql) => Promise<T>) =>
    holding(() => (db.inTransaction ? savepoint(fn, new Set()) : within(fn, new Set(), transactionSteps)));
  const top: SqliteExecutor = {
    dialect: SQLITE,
    step: null,
    db,
    all: (text, params) => gate.run(() => all(text, params)),
    get: (text, params) => gate.run(() => get(text, params)),
    run: (text, params) => gate.run(() => run(text, params)),
    runMany: (text, rows) => gate.run(() => runManyAtomic(text, rows)),
    atomic: own,
    read: (fn) =>
      holding(async () => {
        let live = true;
        try {
          return await fn(held(() => live, null, false));
        } finally {
          live = false;
        }
      }),
    transaction: (fn) => holding(() => within(fn, new Set(), transactionSteps)),
    close: () =>
      gate.run(() => {
        if (db.open) db.close();
      }),
  };
  runners.set(top, gate.run);
  return top;
}
