import pg from 'pg';
import type { Store } from '../types.ts';
import { buildStore } from '../build.ts';
import { createPostgresClock } from '../sql/clock.ts';
import { createPostgresExecutor, TYPES } from '../sql/postgres.ts';
import { applyPgMigrations } from './migrate.ts';

export { applyPgMigrations, PG_MIGRATIONS_DIR } from './migrate.ts';

export interface PostgresStoreOptions {
  /** Connections kept at most (count). Default 10. */
  maxConnections?: number;
  /** A statement running longer is cancelled and its step fails (ms). Default 30,000. */
  statementTimeoutMs?: number;
  /** Waiting longer for a free connection fails the step (ms). Default 10,000. */
  connectTimeoutMs?: number;
}

/**
 * The store on a PostgreSQL database (`postgres://...`): a bounded pool, the migrations applied
 * first (replicas take turns), every multi-statement step in its own transaction.
 */
export async function openPostgresStore(url: string, opts: PostgresStoreOptions = {}): Promise<Store> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.maxConnections ?? 10,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    statement_timeout: opts.statementTimeoutMs ?? 30_000,
    // A transaction left open by a crashed step must not hold its locks for ever.
    idle_in_transaction_session_timeout: 60_000,
    application_name: 'rundiff',
    types: TYPES,
  });
  // An idle connection the server dropped is replaced; the error must not take the process down.
  pool.on('error', (err) => console.error(`rundiff: a PostgreSQL connection failed while idle: ${err.message}`));
  // Nor may one that fails while a step holds it (a server shutdown ends every connection): the
  // step's own statement fails with it (storage_failed) and the pool opens a new one next time.
  pool.on('connect', (client) => client.on('error', () => undefined));
  try {
    await applyPgMigrations(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const sql = createPostgresExecutor(pool);
  // An edge keeps its outbox in its own SQLite file; a PostgreSQL store is a centre's.
  return buildStore(sql, createPostgresClock(), () => ({ outbox: null }));
}
