import { describe, expect, it } from 'vitest';
import { describeEachEngine } from '../../test-support/store-engines.ts';
import { createPostgresClock, createSqliteClock } from './clock.ts';
import { numberPlaceholders } from './postgres.ts';
import { createSqliteExecutor } from './sqlite.ts';
import { TX_ENDED, type Sql } from './types.ts';
import Database from 'better-sqlite3';

function signal() {
  let fire!: () => void;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  return { promise, fire };
}

const table = (q: Sql) =>
  q.run(
    'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, n BIGINT, b BYTEA)'.replace(
      'BYTEA',
      q.dialect.name === 'postgres' ? 'BYTEA' : 'BLOB',
    ),
  );
const ids = async (q: Sql) => (await q.all<{ id: number }>('SELECT id FROM t ORDER BY id')).map((r) => r.id);

describeEachEngine('the store executor', (engine) => {
  it('answers rows, one row and rows changed, with ? placeholders', async () => {
    const q = await engine.openSql();
    await table(q);
    expect(await q.run('INSERT INTO t (id, v, n) VALUES (?, ?, ?)', [1, 'one', 10])).toBe(1);
    expect(
      await q.runMany('INSERT INTO t (id, v, n) VALUES (?, ?, ?)', [
        [2, 'two', 20],
        [3, 'three', 30],
      ]),
    ).toBe(2);
    expect(await q.get('SELECT id, v, n FROM t WHERE id = ?', [2])).toEqual({ id: 2, v: 'two', n: 20 });
    expect(await q.get('SELECT id FROM t WHERE id = ?', [9])).toBeUndefined();
    expect(await q.all('SELECT v FROM t WHERE n > ? ORDER BY id', [15])).toEqual([{ v: 'two' }, { v: 'three' }]);
    expect(await q.run('UPDATE t SET v = ? WHERE n >= ?', ['x', 20])).toBe(2);
  });

  it('leaves a ? inside quotes alone and reads 0/1 flags, bytes and big integers alike', async () => {
    const q = await engine.openSql();
    await table(q);
    await q.run('INSERT INTO t (id, v, n, b) VALUES (?, ?, ?, ?)', [1, 'why?', 2n ** 40n, Buffer.from([0, 1, 255])]);
    await q.run('INSERT INTO t (id, v, n, b) VALUES (?, ?, ?, ?)', [2, null, 0, new Uint8Array([7])]);
    expect(
      await q.all(
        `SELECT id, CASE WHEN v = 'why?' THEN 'quoted' ELSE 'not' END AS w, n, b FROM t WHERE id >= ? ORDER BY id`,
        [1],
      ),
    ).toEqual([
      { id: 1, w: 'quoted', n: 2 ** 40, b: Buffer.from([0, 1, 255]) },
      { id: 2, w: 'not', n: 0, b: Buffer.from([7]) },
    ]);
    const flag = (on: number) =>
      q.get<{ f: string }>('SELECT CASE WHEN ? = 1 THEN ? ELSE ? END AS f FROM t WHERE id = 1', [on, 'yes', 'no']);
    expect([await flag(1), await flag(0)]).toEqual([{ f: 'yes' }, { f: 'no' }]);
  });

  it("the dialect's pieces answer the same on both engines", async () => {
    const q = await engine.openSql();
    await table(q);
    await q.runMany('INSERT INTO t (id, v, n) VALUES (?, ?, ?)', [
      [1, 'Ab_c', 3],
      [2, 'aBXc', 10],
    ]);
    const d = q.dialect;
    expect(await q.all(`SELECT ${d.greatest('n', '5')} AS g, ${d.least('n', '5')} AS l FROM t ORDER BY id`)).toEqual([
      { g: 5, l: 3 },
      { g: 10, l: 5 },
    ]);
    // ASCII folds, the escaped _ is literal.
    expect(await q.all(`SELECT id FROM t WHERE ${d.likeFolded('v')}`, [d.likeValue('%B\\_C%')])).toEqual([{ id: 1 }]);
  });

  it('offset skips the first rows and keeps every later one; a row lock reads as a plain select', async () => {
    const q = await engine.openSql();
    await table(q);
    await q.runMany(
      'INSERT INTO t (id, n) VALUES (?, ?)',
      [1, 2, 3, 4].map((id) => [id, id * 10]),
    );
    const d = q.dialect;
    expect(await q.all(`SELECT id FROM t ORDER BY n DESC ${d.offset('?')}`, [1])).toEqual([
      { id: 3 },
      { id: 2 },
      { id: 1 },
    ]);
    expect(await q.all(`SELECT id FROM t ORDER BY id ${d.offset('?')}`, [4])).toEqual([]);
    const locked = await q.atomic(async (a) => ({
      update: await a.get(`SELECT n FROM t WHERE id = ?${d.forUpdate}`, [2]),
      share: await a.all(`SELECT id FROM t WHERE id IN (?, ?)${d.forShare}`, [1, 4]),
    }));
    expect(locked).toEqual({ update: { n: 20 }, share: [{ id: 1 }, { id: 4 }] });
  });

  it('an atomic step is all or nothing', async () => {
    const q = await engine.openSql();
    await table(q);
    await expect(
      q.atomic(async (a) => {
        await a.run('INSERT INTO t (id) VALUES (?)', [1]);
        await a.run('INSERT INTO t (id) VALUES (?)', [1]);
      }),
    ).rejects.toThrow();
    expect(await ids(q)).toEqual([]);
    expect(await q.atomic(async (a) => (await a.run('INSERT INTO t (id) VALUES (?)', [1])) + 1)).toBe(2);
    expect(await ids(q)).toEqual([1]);
  });

  it('a failed runMany at the top level stores none of its rows', async () => {
    const q = await engine.openSql();
    await table(q);
    await expect(q.runMany('INSERT INTO t (id) VALUES (?)', [[1], [2], [1]])).rejects.toThrow();
    expect(await ids(q)).toEqual([]);
  });

  it('a transaction commits when fn resolves, rolls back when it rejects, nests as a savepoint', async () => {
    const q = await engine.openSql();
    await table(q);
    await q.transaction(async (tx) => {
      await tx.run('INSERT INTO t (id) VALUES (1)');
      await expect(
        tx.transaction(async (inner) => {
          await inner.run('INSERT INTO t (id) VALUES (2)');
          throw new Error('inner refused');
        }),
      ).rejects.toThrow('inner refused');
      await tx.transaction((inner) => inner.run('INSERT INTO t (id) VALUES (3)'));
    });
    expect(await ids(q)).toEqual([1, 3]);
    await expect(
      q.transaction(async (tx) => {
        await tx.run('INSERT INTO t (id) VALUES (4)');
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await ids(q)).toEqual([1, 3]);
  });

  it("a transaction's executor refuses every call once the transaction ended", async () => {
    const q = await engine.openSql();
    await table(q);
    let kept: Sql | null = null;
    await q.transaction(async (tx) => {
      kept = tx;
      await tx.run('INSERT INTO t (id) VALUES (1)');
    });
    await expect(kept!.run('INSERT INTO t (id) VALUES (2)')).rejects.toThrow(TX_ENDED);
    await expect(kept!.atomic((a) => a.all('SELECT id FROM t'))).rejects.toThrow(TX_ENDED);
    expect(await ids(q)).toEqual([1]);
  });

  it("another flow's statements wait for an open transaction and see it whole or not at all", async () => {
    const q = await engine.openSql();
    await table(q);
    const inside = signal();
    const seen: Promise<number[]>[] = [];
    const writes: Promise<unknown>[] = [];
    const failing = q.transaction(async (tx) => {
      await tx.run('INSERT INTO t (id) VALUES (1)');
      seen.push(ids(q));
      writes.push(q.run('INSERT INTO t (id) VALUES (2)'));
      writes.push(q.atomic((a) => a.run('INSERT INTO t (id) VALUES (3)')));
      inside.fire();
      await inside.promise;
      await tx.run('INSERT INTO t (id) VALUES (4)');
      throw new Error('refused');
    });
    await expect(failing).rejects.toThrow('refused');
    await Promise.all(writes);
    expect(await Promise.all(seen)).toEqual([[]]);
    expect(await ids(q)).toEqual([2, 3]);
  });

  it('a read of several statements is not split by a write of another flow', async () => {
    const q = await engine.openSql();
    await table(q);
    await q.run('INSERT INTO t (id) VALUES (1)');
    const between = signal();
    const write = between.promise.then(() => q.run('INSERT INTO t (id) VALUES (2)'));
    const both = await q.read(async (r) => {
      const first = await ids(r);
      between.fire();
      // Long enough for the write to have run, were it not held off (or kept out of the snapshot).
      await new Promise((resolve) => setTimeout(resolve, 20));
      return [first, await ids(r)];
    });
    await write;
    expect(both).toEqual([[1], [1]]);
    expect(await ids(q)).toEqual([1, 2]);
  });

  it('the write clock moves when a bumped step commits, per session and part', async () => {
    const q = await engine.openSql();
    const clock = engine.name === 'postgres' ? createPostgresClock() : createSqliteClock();
    const v1 = await clock.version(q, 's1');
    const p1 = await clock.partVersion(q, 's1', 'changes');
    expect(await clock.version(q, 's1')).toBe(v1);
    await q.atomic(async (a) => clock.bump(a, 's1', 'messages'));
    const v2 = await clock.version(q, 's1');
    expect(v2).not.toBe(v1);
    expect(await clock.partVersion(q, 's1', 'changes')).toBe(p1);
    await q.transaction(async (tx) => {
      clock.bump(tx, 's2');
      clock.bump(tx, 's2');
    });
    expect(await clock.version(q, 's1')).toBe(v2);
    expect(await clock.partVersion(q, 's2', 'changes')).not.toBe(p1);
    await q.atomic(async (a) => clock.bump(a, null));
    expect(await clock.version(q, 's1')).not.toBe(v2);
  });
});

describe('the SQLite executor', () => {
  it('runs a statement within the call while no transaction is open', async () => {
    const db = new Database(':memory:');
    const q = createSqliteExecutor(db);
    await q.run('CREATE TABLE t (id INTEGER PRIMARY KEY)');
    const plain = q.run('INSERT INTO t (id) VALUES (1)');
    const step = q.atomic((a) => a.run('INSERT INTO t (id) VALUES (2)'));
    expect(db.prepare('SELECT id FROM t ORDER BY id').pluck().all()).toEqual([1, 2]);
    await Promise.all([plain, step]);
    await q.close();
  });
});

describe('PostgreSQL placeholders', () => {
  it('numbers each ? outside quotes', () => {
    expect(numberPlaceholders(`SELECT ?, '?', "a?b", ? FROM t WHERE x = ? AND y = 'it''s ?'`)).toBe(
      `SELECT $1, '?', "a?b", $2 FROM t WHERE x = $3 AND y = 'it''s ?'`,
    );
  });
});
