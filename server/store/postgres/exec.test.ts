import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../test-support/postgres.ts';
import { inTransaction, retriedTransaction, type Queryable } from '../sql/postgres.ts';

/**
 * Two store steps that take the same rows in opposite orders deadlock; PostgreSQL aborts one of
 * them (SQLSTATE 40P01, after its `deadlock_timeout` of 1 s). A step whose effects are all in the
 * database runs again and succeeds, so neither caller sees a failure.
 */

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function table() {
  const db = await createTestDatabase();
  cleanups.push(() => db.drop());
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  // The database is dropped with its connections ended: an idle one's end is no test failure.
  pool.on('error', () => {});
  cleanups.push(() => pool.end());
  await pool.query('CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)');
  await pool.query('INSERT INTO t VALUES (1, 0), (2, 0)');
  return pool;
}

/** Two steps, each updating one row, then (once both hold their first row) the other's. */
function crossedSteps() {
  let arrived = 0;
  let release!: () => void;
  const bothHoldOne = new Promise<void>((resolve) => (release = resolve));
  const runs = { a: 0, b: 0 };
  const step = (name: 'a' | 'b', first: number, second: number) => async (q: Queryable) => {
    runs[name]++;
    await q.query('UPDATE t SET v = v + 1 WHERE id = $1', [first]);
    if (++arrived === 2) release();
    await bothHoldOne;
    await q.query('UPDATE t SET v = v + 1 WHERE id = $1', [second]);
  };
  return { a: step('a', 1, 2), b: step('b', 2, 1), runs };
}

describe('a store step aborted by a deadlock', () => {
  it('control: the crossed steps really deadlock, and one fails with 40P01 when not run again', async () => {
    const pool = await table();
    const { a, b } = crossedSteps();
    const outcomes = await Promise.allSettled([inTransaction(pool, a), inTransaction(pool, b)]);
    const failed = outcomes.filter((o) => o.status === 'rejected');
    expect(failed).toHaveLength(1);
    expect((failed[0] as PromiseRejectedResult).reason).toMatchObject({ code: '40P01' });
  });

  it('runs again and both steps succeed, each applied exactly once', async () => {
    const pool = await table();
    const { a, b, runs } = crossedSteps();
    await Promise.all([retriedTransaction(pool, a), retriedTransaction(pool, b)]);
    expect(runs.a + runs.b).toBe(3); // one of them ran twice
    const rows = await pool.query<{ id: number; v: number }>('SELECT id, v FROM t ORDER BY id');
    expect(rows.rows).toEqual([
      { id: 1, v: 2 },
      { id: 2, v: 2 },
    ]);
  });

  it('any other failure is not run again', async () => {
    const pool = await table();
    let runs = 0;
    await expect(
      retriedTransaction(pool, async (q) => {
        runs++;
        await q.query('INSERT INTO t VALUES (1, 0)');
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(runs).toBe(1);
  });
});
