import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const FILE_RE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/**
 * Reads `NNNN_name.sql` files in version order. A duplicate number is a packaging error; a gap is
 * not (migrations are written on parallel branches, each taking its own number, and each stands
 * alone), so a migration is applied whenever the database has not seen its number.
 */
export function readMigrations(dir: URL | string): Migration[] {
  const folder = dir instanceof URL ? fileURLToPath(dir) : dir;
  const found: Migration[] = [];
  for (const file of fs.readdirSync(folder)) {
    const m = FILE_RE.exec(file);
    if (!m) continue;
    found.push({ version: Number(m[1]), name: m[2]!, sql: fs.readFileSync(`${folder}/${file}`, 'utf8') });
  }
  found.sort((a, b) => a.version - b.version);
  found.forEach((m, i) => {
    if (m.version < 1 || (i > 0 && found[i - 1]!.version === m.version))
      throw new Error(`migrations must have distinct numbers from 0001; found ${m.version} twice or out of range`);
  });
  return found;
}

/**
 * Applies the migrations the database has not seen, each in its own transaction together with its
 * record in `schema_migrations`, so a failed migration leaves the previous version intact.
 * Returns the versions applied now.
 */
export function applyMigrations(db: Database.Database, dir: URL | string): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const migrations = readMigrations(dir);
  const applied = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
  );
  const known = new Set(migrations.map((m) => m.version));
  const unknown = [...applied].filter((v) => !known.has(v));
  if (unknown.length > 0) {
    throw new Error(
      `the database has schema version ${Math.max(...unknown)}, newer than this rundiff knows (it knows ${[...known].join(', ')}); upgrade rundiff`,
    );
  }
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const done: number[] = [];
  for (const m of migrations) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      record.run(m.version, m.name, Date.now());
    })();
    done.push(m.version);
  }
  return done;
}
