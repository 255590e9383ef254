import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTempDir } from '../test-support/temp-repo.ts';
import { openDatabase, type Db } from './database.ts';
import { startWalCheckpointer, type WalCheckpointer } from './wal-checkpointer.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDb(): { db: Db; file: string } {
  const dir = createTempDir();
  const file = path.join(dir, 'rundiff.db');
  const db = openDatabase(file);
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => db.open && db.close());
  return { db, file };
}

function start(db: Db, everyMs: number): WalCheckpointer {
  const c = startWalCheckpointer(db, { everyMs })!;
  expect(c).not.toBeNull();
  cleanups.push(() => c.close());
  return c;
}

const PAGE = 4096;
/** 3,000 pages in 10 commits of 300 pages each. */
function write3000Pages(db: Db): void {
  db.exec('CREATE TABLE IF NOT EXISTS blobs (b BLOB)');
  const insert = db.prepare('INSERT INTO blobs (b) VALUES (?)');
  for (let t = 0; t < 10; t++) db.transaction(() => insert.run(Buffer.alloc(300 * PAGE, t + 1)))();
}
const walPages = (file: string) => fs.statSync(`${file}-wal`).size / PAGE;
const dbPages = (file: string) => fs.statSync(file).size / PAGE;

describe('WAL checkpoints off the server thread', () => {
  it("the server's connection no longer checkpoints inside its commits (positive control: by default it does)", () => {
    const plain = tempDb();
    write3000Pages(plain.db);
    // By default each commit past 1,000 WAL pages copies them into the database and starts the WAL over.
    expect(walPages(plain.file)).toBeLessThan(2000);
    expect(dbPages(plain.file)).toBeGreaterThan(1000);

    const served = tempDb();
    start(served.db, 3_600_000); // the thread never gets to a checkpoint in this test
    write3000Pages(served.db);
    expect(walPages(served.file)).toBeGreaterThan(2900);
    expect(dbPages(served.file)).toBeLessThan(100);
  });

  it('the checkpoint thread copies the WAL into the database while the server writes on', async () => {
    const { db, file } = tempDb();
    start(db, 20);
    write3000Pages(db);
    await vi.waitFor(() => expect(dbPages(file)).toBeGreaterThan(2900), { timeout: 20_000, interval: 20 });
    // Every row is there for the server's connection.
    expect(db.prepare('SELECT COUNT(*) FROM blobs').pluck().get()).toBe(10);
  });

  it("closing stops the thread and gives the server's connection its default checkpoints back", async () => {
    const { db } = tempDb();
    const c = start(db, 20);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(16_384);
    await c.close();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });

  it('an in-memory database has no file to checkpoint from elsewhere', () => {
    const db = openDatabase(':memory:');
    cleanups.push(() => db.close());
    expect(startWalCheckpointer(db)).toBeNull();
  });
});
