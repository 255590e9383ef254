import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createTempDir } from '../test-support/temp-repo.ts';
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

  it('a PostgreSQL URL is refused clearly while that store is not built in; it never falls back to SQLite', async () => {
    const file = tempDb();
    for (const url of ['postgres://u@localhost/rundiff', 'postgresql://u@localhost/rundiff']) {
      await expect(openStoreFrom({ dbPath: file, databaseUrl: url })).rejects.toMatchObject({
        code: 'invalid_input',
        message: 'PostgreSQL store not built in this version',
      });
    }
    expect(fs.existsSync(file)).toBe(false);
  });

  it('redact hides a URL password only', () => {
    expect(redact('postgres://u:p%40ss@h:5432/db')).toBe('postgres://u:***@h:5432/db');
    expect(redact('postgres://u@h/db')).toBe('postgres://u@h/db');
    expect(redact('postgres://h/db')).toBe('postgres://h/db');
  });
});
