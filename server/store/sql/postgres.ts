import pg from 'pg';
import { POSTGRES } from './dialect.ts';
import { TX_ENDED, type Executor, type Param, type Sql, type Step } from './types.ts';

// Numbers come back as JS numbers, as SQLite's do: BIGINT (times, sizes, counts) and NUMERIC (SUM of
// BIGINT) are far below 2^53 here, and a string where a number is expected would change the answers.
const INT8 = 20;
const NUMERIC = 1700;
export const TYPES = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8 || oid === NUMERIC) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/** Runs `fn` in a transaction on a client of `pool`; the client goes back to the pool either way. */
export async function inTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
  begin = 'BEGIN',
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query(begin);
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    try {
      await client.query('ROLLBACK');
    } catch {
      // The connection itself failed: do not hand it to the next caller.
      broken = true;
    }
    throw err;
  } finally {
    client.release(broken);
  }
}

/**
 * SQLSTATEs after which the same step, run again from the start, can succeed: a deadlock (two steps
 * took the same rows in opposite orders; PostgreSQL aborted one) and a serialization failure.
 */
const RETRYABLE = new Set(['40P01', '40001']);
/** Runs of one step at most, the first included. */
export const STEP_ATTEMPTS = 3;

/**
 * A store step in its own transaction, run again when PostgreSQL aborted it for a deadlock or a
 * serialization failure (after a short random pause, so the two do not meet again). Only for
 * steps whose effects are all in the database: a step's own code runs once per attempt.
 */
export async function retriedTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await inTransaction(pool, fn);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt >= STEP_ATTEMPTS || typeof code !== 'string' || !RETRYABLE.has(code)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
    }
  }
}

const numbered = new Map<string, string>();

/** `?` placeholders as PostgreSQL's `$1..$n` (a `?` inside quotes is left alone); cached per text. */
export function numberPlaceholders(text: string): string {
  let out = numbered.get(text);
  if (out !== undefined) return out;
  out = '';
  let n = 0;
  let quote: string | null = null;
  for (const c of text) {
    if (quote !== null) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '?') {
      out += `$${++n}`;
      continue;
    }
    out += c;
  }
  numbered.set(text, out);
  return out;
}

/** Anything that runs a query: the pool (each call on any free connection) or one held client. */
export interface Queryable {
  query<R extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
  /** Inside a transaction: the sessions whose write clock it already moved. */
  bumped?: Set<string>;
}

function newStep(memo: Set<string>): Step & { settled(): Promise<unknown> } {
  const pending: Promise<unknown>[] = [];
  return {
    memo,
    defer(statement) {
      statement.catch(() => undefined);
      pending.push(statement);
    },
    settled: () => Promise.all(pending),
  };
}

let savepoints = 0;

type Send = <R extends pg.QueryResultRow = Record<string, unknown>>(
  text: string,
  values?: unknown[],
) => Promise<pg.QueryResult<R>>;

/**
 * A bounded `pg` pool as the store's executor. At the top level a statement runs on any free
 * connection; an atomic step is its own transaction (run again after a deadlock), a read of several
 * statements one read-only REPEATABLE READ snapshot, a transaction holds one client from BEGIN to
 * COMMIT/ROLLBACK. Within this process, transactions run one after the other and calls made while
 * one is open or waiting run after it, in order (as on SQLite); with none, calls run side by side.
 */
export function createPostgresExecutor(pool: pg.Pool): Executor {
  let open = 0;
  let closing: Promise<void> | null = null;
  const idle: (() => void)[] = [];
  let queue: Promise<unknown> = Promise.resolve();
  let queued = 0;
  function enqueue<T>(op: () => Promise<T>): Promise<T> {
    queued++;
    const turn = queue.then(op);
    queue = turn.catch(() => undefined);
    return turn.finally(() => queued--);
  }
  const ordered = <T>(op: () => Promise<T>): Promise<T> => (queued === 0 ? op() : enqueue(op));

  /** The executor bound to the transaction open on `client`, refusing every call once `live` is false. */
  function onClient(send: Send, live: () => boolean, step: Step & { settled(): Promise<unknown> }): Sql {
    const query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> =>
      live() ? send<R>(text, values) : Promise.reject(new Error(TX_ENDED));
    const exec = <R extends pg.QueryResultRow>(text: string, params: readonly Param[] = []) =>
      query<R>(numberPlaceholders(text), params as unknown[]);
    const q: Sql = {
      dialect: POSTGRES,
      step,
      all: async <R>(text: string, params?: readonly Param[]) => (await exec(text, params)).rows as R[],
      get: async <R>(text: string, params?: readonly Param[]) => (await exec(text, params)).rows[0] as R | undefined,
      run: async (text, params) => (await exec(text, params)).rowCount ?? 0,
      // Issued together: they run in order, one after the other.
      runMany: async (text, rows) =>
        (await Promise.all(rows.map((r) => exec(text, r)))).reduce((n, r) => n + (r.rowCount ?? 0), 0),
      // A failed statement fails the whole transaction, so a step needs no savepoint of its own.
      atomic: (fn) => (live() ? fn(q) : Promise.reject(new Error(TX_ENDED))),
      read: (fn) => (live() ? fn(q) : Promise.reject(new Error(TX_ENDED))),
      transaction: async (fn) => {
        if (!live()) throw new Error(TX_ENDED);
        const name = `sp_${++savepoints}`;
        await send(`SAVEPOINT ${name}`);
        let inner = true;
        const sub = newStep(step.memo);
        try {
          const out = await fn(onClient(send, () => inner && live(), sub));
          await sub.settled();
          inner = false;
          await send(`RELEASE SAVEPOINT ${name}`);
          return out;
        } catch (err) {
          inner = false;
          await send(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => {});
          // A clock move undone with the savepoint must be made again by the next write.
          step.memo.clear();
          throw err;
        }
      },
    };
    return q;
  }

  /** Runs `fn` over the transaction open on `client`; its executor refuses every call once it ended. */
  async function over<T>(client: pg.PoolClient, fn: (q: Sql) => Promise<T>): Promise<T> {
    let live = true;
    const step = newStep(new Set());
    // Statements issued together (a deferred one, a runMany) go to the client one after the other.
    let tail: Promise<unknown> = Promise.resolve();
    const send: Send = (text, values) => {
      const next = tail.then(() => client.query(text, values));
      tail = next.then(
        () => undefined,
        () => undefined,
      );
      return next;
    };
    try {
      const out = await fn(onClient(send, () => live, step));
      await step.settled();
      return out;
    } finally {
      live = false;
    }
  }

  const atomic = <T>(fn: (q: Sql) => Promise<T>) => ordered(() => retriedTransaction(pool, (c) => over(c, fn)));
  // A read-only snapshot never fails to serialise, and sees every transaction whole or not at all.
  const SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';
  const exec = <R extends pg.QueryResultRow>(text: string, params: readonly Param[] = []) =>
    ordered(() => pool.query<R>(numberPlaceholders(text), params as unknown[]));
  const top: Executor = {
    dialect: POSTGRES,
    step: null,
    all: async <R>(text: string, params?: readonly Param[]) => (await exec(text, params)).rows as R[],
    get: async <R>(text: string, params?: readonly Param[]) => (await exec(text, params)).rows[0] as R | undefined,
    run: async (text, params) => (await exec(text, params)).rowCount ?? 0,
    runMany: (text, rows) => atomic((q) => q.runMany(text, rows)),
    atomic,
    read: (fn) => ordered(() => inTransaction(pool, (c) => over(c, fn), SNAPSHOT)),
    transaction(fn) {
      open++;
      return enqueue(() => inTransaction(pool, (c) => over(c, fn))).finally(() => {
        open--;
        if (open === 0) idle.splice(0).forEach((r) => r());
      });
    },
    close() {
      closing ??= (async () => {
        if (open > 0) await new Promise<void>((r) => idle.push(r));
        await pool.end();
      })();
      return closing;
    },
  };
  return top;
}
