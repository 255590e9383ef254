import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createTestDatabase } from '../test-support/postgres.ts';
import { createTempDir } from '../test-support/temp-repo.ts';
import pg from 'pg';
import { resolveConfig } from '../config.ts';
import { openStoreFrom, redact } from './index.ts';

function tempDb(): string {
  const dir = createTempDir();
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'rundiff.db');
}

describe('choosing the store engine', () => {
  it('without a database URL the store is the SQLite file, created and usable', async () => {
    const file = tempDb();
    for (const databaseUrl of [undefined, null, '']) {
      const store = await openStoreFrom({ dbPath: file, databaseUrl });
      expect(store.engine).toBe('sqlite');
      await store.sessions.touch('s', 1);
      expect(await store.sessions.exists('s')).toBe(true);
      await store.close();
    }
    expect(fs.existsSync(file)).toBe(true);
  });

  it('a URL of another scheme is refused with its reason, the password hidden, and no file made', async () => {
    const file = tempDb();
    await expect(openStoreFrom({ dbPath: file, databaseUrl: 'mysql://me:secret@host/db' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/must start with postgres:\/\/ or postgresql:\/\/.*me:\*\*\*@host/),
    });
    await expect(openStoreFrom({ dbPath: file, databaseUrl: 'mysql://me:secret@host/db' })).rejects.not.toThrow(
      /secret/,
    );
    expect(fs.existsSync(file)).toBe(false);
  });

  it('a PostgreSQL URL opens the PostgreSQL store, migrated and usable; no SQLite file is made', async () => {
    const file = tempDb();
    const db = await createTestDatabase();
    onTestFinished(() => db.drop());
    for (const url of [db.url, db.url.replace(/^postgres:/, 'postgresql:')]) {
      const store = await openStoreFrom({ dbPath: file, databaseUrl: url });
      expect(store.engine).toBe('postgres');
      await store.sessions.touch('s', 1);
      expect(await store.sessions.exists('s')).toBe(true);
      await store.close();
    }
    expect(fs.existsSync(file)).toBe(false);
  });

  it('the pool holds at most RUNDIFF_DATABASE_POOL_MAX connections under a burst of reads (more without it)', async () => {
    const db = await createTestDatabase();
    onTestFinished(() => db.drop());
    const watcher = new pg.Client({ connectionString: db.url });
    await watcher.connect();
    onTestFinished(() => watcher.end());
    const connections = async () =>
      Number(
        (
          await watcher.query(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'rundiff'",
          )
        ).rows[0].n,
      );
    const burst = async (env: Record<string, string>) => {
      const config = resolveConfig({ db: tempDb() }, { RUNDIFF_DATABASE_URL: db.url, ...env });
      const store = await openStoreFrom(config);
      try {
        await store.sessions.touch('s', 1);
        await Promise.all(Array.from({ length: 40 }, () => store.sessions.exists('s')));
        return await connections();
      } finally {
        await store.close();
      }
    };
    expect(await burst({ RUNDIFF_DATABASE_POOL_MAX: '2' })).toBeLessThanOrEqual(2);
    // Control: the default pool opens more than two for the same burst.
    expect(await burst({})).toBeGreaterThan(2);
  });

  it('a PostgreSQL server that cannot be reached is storage_failed naming the cause, the password hidden; never SQLite', async () => {
    const file = tempDb();
    const err = await openStoreFrom({ dbPath: file, databaseUrl: 'postgres://u:secret@127.0.0.1:1/rundiff' }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({
      code: 'storage_failed',
      message: expect.stringMatching(/postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/rundiff.*ECONNREFUSED/),
    });
    expect(String((err as Error).message)).not.toMatch(/secret/);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('redact hides a URL password only', () => {
    expect(redact('postgres://u:p%40ss@h:5432/db')).toBe('postgres://u:***@h:5432/db');
    expect(redact('postgres://u@h/db')).toBe('postgres://u@h/db');
    expect(redact('postgres://h/db')).toBe('postgres://h/db');
  });
});
