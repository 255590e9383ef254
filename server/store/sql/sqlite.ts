import type Database from 'better-sqlite3';
import { SQLITE } from './dialect.ts';
import { createGate, type Gate } from './gate.ts';
import { TX_ENDED, type Dialect, type Executor, type Param, type Sql, type Step } from './types.ts';

type Db = Database.Database;
type Statement = Database.Statement<unknown[], unknown>;

/** The SQLite executor: the connection and its gate, besides the executor itself. */
export interface SqliteExecutor extends Executor {
  readonly db: Db;
}

const ended = (): Promise<never> => Promise.reject(new Error(TX_ENDED));

// better-sqlite3 binds Buffers as BLOBs; another Uint8Array is bound as one too.
const toBuffer = (p: Param): unknown =>
  p instanceof Uint8Array && !Buffer.isBuffer(p) ? Buffer.from(p.buffer, p.byteOffset, p.byteLength) : p;
function bindable(params: readonly Param[]): unknown[] {
  for (const p of params) if (p instanceof Uint8Array && !Buffer.isBuffer(p)) return params.map(toBuffer);
  return params as unknown[];
}

class StepState implements Step {
  pending: Promise<unknown>[] | null = null;
  constructor(readonly memo: Set<string>) {}
  defer(statement: Promise<unknown>): void {
    // Awaited before the commit; a failure meanwhile is the step's own.
    statement.catch(() => undefined);
    (this.pending ??= []).push(statement);
  }
}

/** The connection's statements, prepared once per text, and its transaction steps. */
class Connection {
  private readonly statements = new Map<string, Statement>();
  private readonly begin: Statement;
  private readonly commit: Statement;
  private readonly rollback: Statement;
  private savepoints = 0;
  readonly runManyAtomic: (text: string, rows: readonly (readonly Param[])[]) => number;

  constructor(readonly db: Db) {
    this.begin = db.prepare('BEGIN');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
    this.runManyAtomic = db.transaction((text: string, rows: readonly (readonly Param[])[]) =>
      this.runMany(text, rows),
    );
  }

  prepare(text: string): Statement {
    let s = this.statements.get(text);
    if (!s) this.statements.set(text, (s = this.db.prepare(text)));
    return s;
  }
  all<R>(text: string, params: readonly Param[] = []): R[] {
    return this.prepare(text).all(...bindable(params)) as R[];
  }
  get<R>(text: string, params: readonly Param[] = []): R | undefined {
    return this.prepare(text).get(...bindable(params)) as R | undefined;
  }
  run(text: string, params: readonly Param[] = []): number {
    return this.prepare(text).run(...bindable(params)).changes;
  }
  runMany(text: string, rows: readonly (readonly Param[])[]): number {
    const s = this.prepare(text);
    let n = 0;
    for (const r of rows) n += s.run(...bindable(r)).changes;
    return n;
  }

  /** Runs `fn` in a transaction (BEGIN) or, inside one (`memo` given), a savepoint; `fn`'s executor is live only meanwhile. */
  async within<T>(fn: (q: Sql) => Promise<T>, memo: Set<string> | null): Promise<T> {
    const name = memo === null ? null : `rundiff_sp${++this.savepoints}`;
    if (name === null) this.begin.run();
    else this.db.exec(`SAVEPOINT ${name}`);
    const step = new StepState(memo ?? new Set());
    const q = new Held(this, step, true);
    let result: T;
    try {
      result = await fn(q);
      if (step.pending) await Promise.all(step.pending);
    } catch (err) {
      this.undo(q, step, name);
      throw err;
    }
    q.live = false;
    try {
      // The transaction holding a savepoint can only have ended meanwhile without the gate (a test's).
      if (name === null) this.commit.run();
      else if (this.db.inTransaction) this.db.exec(`RELEASE ${name}`);
    } catch (err) {
      this.undo(q, step, name);
      throw err;
    }
    return result;
  }

  private undo(q: Held, step: StepState, savepoint: string | null): void {
    q.live = false;
    // A failed statement (a full disk) may already have rolled the whole transaction back.
    if (!this.db.inTransaction) return;
    if (savepoint === null) this.rollback.run();
    else {
      this.db.exec(`ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
      // What a writer noted in the undone part must be done again by the next write.
      step.memo.clear();
    }
  }
}

/** The executor while this flow holds the gate: statements run at once; `inTx`: a transaction is open. */
class Held implements Sql {
  readonly dialect: Dialect = SQLITE;
  live = true;
  constructor(
    private readonly c: Connection,
    readonly step: StepState | null,
    private readonly inTx: boolean,
  ) {}
  all<R>(text: string, params?: readonly Param[]): Promise<R[]> {
    if (!this.live) return ended();
    try {
      return Promise.resolve(this.c.all<R>(text, params));
    } catch (err) {
      return Promise.reject(err);
    }
  }
  get<R>(text: string, params?: readonly Param[]): Promise<R | undefined> {
    if (!this.live) return ended();
    try {
      return Promise.resolve(this.c.get<R>(text, params));
    } catch (err) {
      return Promise.reject(err);
    }
  }
  run(text: string, params?: readonly Param[]): Promise<number> {
    if (!this.live) return ended();
    try {
      return Promise.resolve(this.c.run(text, params));
    } catch (err) {
      return Promise.reject(err);
    }
  }
  runMany(text: string, rows: readonly (readonly Param[])[]): Promise<number> {
    if (!this.live) return ended();
    try {
      return Promise.resolve(this.inTx ? this.c.runMany(text, rows) : this.c.runManyAtomic(text, rows));
    } catch (err) {
      return Promise.reject(err);
    }
  }
  atomic<T>(fn: (q: Sql) => Promise<T>): Promise<T> {
    if (!this.live) return ended();
    return this.c.within(fn, this.inTx ? this.step!.memo : null);
  }
  read<T>(fn: (q: Sql) => Promise<T>): Promise<T> {
    return this.live ? fn(this) : ended();
  }
  transaction<T>(fn: (q: Sql) => Promise<T>): Promise<T> {
    return this.atomic(fn);
  }
}

/** The top-level executor: each call takes the gate, at once when it is free (within the call). */
class Top implements SqliteExecutor {
  readonly dialect: Dialect = SQLITE;
  readonly step = null;
  readonly db: Db;
  constructor(
    private readonly c: Connection,
    private readonly gate: Gate,
  ) {
    this.db = c.db;
  }
  all<R>(text: string, params?: readonly Param[]): Promise<R[]> {
    return this.gate.run(() => this.c.all<R>(text, params));
  }
  get<R>(text: string, params?: readonly Param[]): Promise<R | undefined> {
    return this.gate.run(() => this.c.get<R>(text, params));
  }
  run(text: string, params?: readonly Param[]): Promise<number> {
    return this.gate.run(() => this.c.run(text, params));
  }
  runMany(text: string, rows: readonly (readonly Param[])[]): Promise<number> {
    return this.gate.run(() => this.c.runManyAtomic(text, rows));
  }
  /** Runs `op` holding the gate: at once when it is free (within this call), else after those before it. */
  private holding<T>(op: () => Promise<T>): Promise<T> {
    if (this.gate.tryAcquire()) return this.released(op);
    return this.gate.acquire().then(() => this.released(op));
  }
  private async released<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } finally {
      this.gate.release();
    }
  }
  atomic<T>(fn: (q: Sql) => Promise<T>): Promise<T> {
    // A step at the top level is a transaction of its own; were one open all the same (a test's gate
    // that lets another flow in), a savepoint inside it, as a plain statement would run inside it.
    return this.holding(() => this.c.within(fn, this.c.db.inTransaction ? new Set() : null));
  }
  read<T>(fn: (q: Sql) => Promise<T>): Promise<T> {
    return this.holding(async () => {
      const q = new Held(this.c, null, false);
      try {
        return await fn(q);
      } finally {
        q.live = false;
      }
    });
  }
  transaction<T>(fn: (q: Sql) => Promise<T>): Promise<T> {
    return this.holding(() => this.c.within(fn, null));
  }
  close(): Promise<void> {
    return this.gate.run(() => {
      if (this.c.db.open) this.c.db.close();
    });
  }
}

/**
 * One better-sqlite3 connection as the store's executor. Statements are prepared once per text and
 * run synchronously: while the gate is free a statement runs inside the call. An atomic step, a
 * read of several statements and a transaction hold the gate from their first statement to their
 * last (BEGIN to COMMIT), so statements of other flows wait instead of running inside them.
 */
export function createSqliteExecutor(db: Db, opts: { gate?: Gate } = {}): SqliteExecutor {
  // A gate is passed only by the test that shows what happens without serialising.
  return new Top(new Connection(db), opts.gate ?? createGate());
}
