import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pathToFileURL } from 'node:url';
import { inPackage } from '../package-root.ts';
import { applyMigrations } from './migrate.ts';

export type Db = Database.Database;

/** The project's `migrations/` folder (plain SQL, forward-only). */
export const MIGRATIONS_DIR = pathToFileURL(`${inPackage('migrations')}/`);

/** The one place the pragmas are set: WAL for concurrent readers, enforced cascades, short lock waits. */
export function applyPragmas(db: Db): void {
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  // A second process (an offline `rundiff run`) may hold the write lock for a moment.
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
}

/**
 * Opens (creating it and its folder when missing) the database at `file`, sets the pragmas and
 * applies pending migrations. `:memory:` is accepted for quick tools.
 */
export function openDatabase(file: string, opts: { migrationsDir?: URL | string } = {}): Db {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  try {
    applyPragmas(db);
    applyMigrations(db, opts.migrationsDir ?? MIGRATIONS_DIR);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}
