import pg from 'pg';

/** Anything that runs a query: the pool (each call on any free connection) or one held client. */
export interface Queryable {
  query<R extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
  /** Inside a transaction: the sessions whose write clock it already moved. */
  bumped?: Set<string>;
}

/**
 * Where a module's statements run. `atomic` makes a multi-statement step all-or-nothing: its own
 * transaction on a pooled client at the top level, a savepoint inside an open transaction.
 */
export interface Exec {
  q: Queryable;
  atomic<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /**
   * A read of several statements that must agree with each other (a change and its file rows): one
   * snapshot (a read-only REPEATABLE READ transaction at the top level, the open transaction inside one).
   */
  read<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
}

// Numbers come back as JS numbers, as SQLite's do: BIGINT (times, sizes, counts) and NUMERIC (SUM of
// BIGINT) are far below 2^53 here, and a string where a number is expected would change the answers.
const INT8 = 20;
const NUMERIC = 1700;
export const TYPES = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8 || oid === NUMERIC) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as unknown as pg.CustomTypesConfig;

let savepoints = 0;

/** Runs `fn` inside a savepoint of the transaction open on `client`. */
export async function inSavepoint<T>(client: Queryable, fn: () => Promise<T>): Promise<T> {
  const name = `sp_${++savepoints}`;
  await client.query(`SAVEPOINT ${name}`);
  try {
    const out = await fn();
    await client.query(`RELEASE SAVEPOINT ${name}`);
    return out;
  } catch (err) {
    await client.query(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => {});
    // A clock move undone with the savepoint must be made again by the next write.
    client.bumped?.clear();
    throw err;
  }
}

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
export async function retriedTransaction<T>(pool: pg.Pool, fn: (client: Queryable) => Promise<T>): Promise<T> {
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

/** The executor of the top-level store: single statements on the pool, steps in their own transactions. */
export function poolExec(pool: pg.Pool): Exec {
  return {
    q: pool,
    // A step's code only reads and writes the database, so a step aborted by a deadlock runs again.
    atomic: (fn) => retriedTransaction(pool, (c) => fn(c)),
    // A read-only snapshot never fails to serialise, and sees every transaction whole or not at all.
    read: (fn) => inTransaction(pool, (c) => fn(c), 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY'),
  };
}

/**
 * The executor bound to an open transaction on `client`. A step needs no savepoint of its own: on
 * PostgreSQL a failed statement fails the whole transaction (a caller that wants to go on after a
 * failure nests `tx.transaction`, which is a savepoint).
 */
export function clientExec(client: Queryable): Exec {
  return { q: client, atomic: (fn) => fn(client), read: (fn) => fn(client) };
}

/** A column named in a statement: `binary` is a keyword in PostgreSQL, so it is quoted wherever it is named. */
export const quoteColumn = (c: string): string => (c === 'binary' ? '"binary"' : c);

/** `$1, $2, ...` for `n` values from `start`. */
export const placeholders = (n: number, start = 1): string =>
  Array.from({ length: n }, (_, i) => `$${start + i}`).join(', ');

/** Multi-row VALUES for `rows` rows of `width` columns: `($1, $2), ($3, $4)`. */
export const valuesRows = (rows: number, width: number): string =>
  Array.from({ length: rows }, (_, r) => `(${placeholders(width, r * width + 1)})`).join(', ');
