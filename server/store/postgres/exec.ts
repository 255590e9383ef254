import pg from 'pg';
import { inTransaction, retriedTransaction, type Queryable } from '../sql/postgres.ts';

export { inTransaction, retriedTransaction, STEP_ATTEMPTS, TYPES, type Queryable } from '../sql/postgres.ts';

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
