import pg from 'pg';

/** Anything that runs a query: the pool (each call on any free connection) or one held client. */
export interface Queryable {
  query<R extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
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

/** The executor of the top-level store: single statements on the pool, steps in their own transactions. */
export function poolExec(pool: pg.Pool): Exec {
  return {
    q: pool,
    atomic: (fn) => inTransaction(pool, (c) => fn(c)),
    // A read-only snapshot never fails to serialise, and sees every transaction whole or not at all.
    read: (fn) => inTransaction(pool, (c) => fn(c), 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY'),
  };
}

/** The executor bound to an open transaction on `client`. */
export function clientExec(client: Queryable): Exec {
  return { q: client, atomic: (fn) => inSavepoint(client, () => fn(client)), read: (fn) => fn(client) };
}

/** `$1, $2, ...` for `n` values from `start`. */
export const placeholders = (n: number, start = 1): string =>
  Array.from({ length: n }, (_, i) => `$${start + i}`).join(', ');

/** Multi-row VALUES for `rows` rows of `width` columns: `($1, $2), ($3, $4)`. */
export const valuesRows = (rows: number, width: number): string =>
  Array.from({ length: rows }, (_, r) => `(${placeholders(width, r * width + 1)})`).join(', ');
