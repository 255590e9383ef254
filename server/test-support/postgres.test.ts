import fs from 'node:fs';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createTestDatabase, startPostgres } from './postgres.ts';

async function selectOne(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ one: number }>('select 1 as one');
    return rows[0]!.one;
  } finally {
    await client.end();
  }
}

describe('test PostgreSQL server', () => {
  it('starts a real server that answers, and leaves nothing behind once stopped', async () => {
    const server = await startPostgres();
    onTestFinished(() => server.stop());
    expect(await selectOne(server.url())).toBe(1);
    expect(fs.existsSync(server.dir)).toBe(true);
    // The server runs from its own temp folder, not the machine's cluster.
    expect(fs.existsSync(`${server.dir}/data/postmaster.pid`)).toBe(true);

    await server.stop();
    expect(fs.existsSync(server.dir)).toBe(false);
    await expect(selectOne(server.url())).rejects.toThrow(/ECONNREFUSED/);
    expect(() => process.kill(server.pid, 0)).toThrow();
  });

  it('gives each caller its own database and drops it', async () => {
    const a = await createTestDatabase();
    const b = await createTestDatabase();
    onTestFinished(async () => {
      await a.drop();
      await b.drop();
    });
    expect(a.name).not.toBe(b.name);
    const client = new pg.Client({ connectionString: a.url });
    await client.connect();
    await client.query('create table t (x int)');
    await client.end();
    expect(await selectOne(b.url)).toBe(1);
    const other = new pg.Client({ connectionString: b.url });
    await other.connect();
    await expect(other.query('select * from t')).rejects.toThrow(/does not exist/);
    await other.end();

    await a.drop();
    await expect(selectOne(a.url)).rejects.toThrow(/does not exist/);
  });
});
