import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { inPackage } from '../../package-root.ts';
import { readMigrations } from '../migrate.ts';

/** The PostgreSQL edition of the migrations (same numbers as the SQLite ones, SQL per engine). */
export const PG_MIGRATIONS_DIR = pathToFileURL(`${inPackage('migrations', 'postgres')}/`);

// Any constant shared by every rundiff: the key of the advisory lock that serialises migrations.
const MIGRATION_LOCK = 0x72756e64; // "rund"

/**
 * Applies the migrations the database has not seen, each in its own transaction with its record in
 * `schema_migrations`. Replicas starting together take turns on an advisory lock, so one applies
 * and the others find the work done. Returns the versions applied now.
 */
export async function applyPgMigrations(pool: pg.Pool, dir: URL | string = PG_MIGRATIONS_DIR): Promise<number[]> {
  const migrations = readMigrations(dir);
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at BIGINT NOT NULL
      )`);
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((r) => Number(r.version)));
      const known = new Set(migrations.map((m) => m.version));
      const unknown = [...applied].filter((v) => !known.has(v));
      if (unknown.length > 0)
        throw new Error(
          `the database has schema version ${Math.max(...unknown)}, newer than this rundiff knows (it knows ${[...known].join(', ')}); upgrade rundiff`,
        );
      const done: number[] = [];
      for (const m of migrations) {
        if (applied.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
            m.version,
            m.name,
            Date.now(),
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`PostgreSQL migration ${m.version} (${m.name}) failed: ${(err as Error).message}`, {
            cause: err,
          });
        }
        done.push(m.version);
      }
      return done;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
