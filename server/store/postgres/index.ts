import pg from 'pg';
import type { ToolCallRecord } from '../../../shared/index.ts';
import type { CallLogApi, CatalogApi, Store } from '../types.ts';
import { buildStore, type EngineModules } from '../build.ts';
import { createPostgresClock } from '../sql/clock.ts';
import { createPostgresExecutor, legacyExecOf, TYPES } from '../sql/postgres.ts';
import { createPgContents } from './contents.ts';
import type { Exec } from './exec.ts';
import { createPgIngest } from './ingest.ts';
import { createPgMessages } from './messages.ts';
import { applyPgMigrations } from './migrate.ts';
import { createPgRuns } from './runs.ts';
import { createPgViewed } from './viewed.ts';

export { applyPgMigrations, PG_MIGRATIONS_DIR } from './migrate.ts';

export interface PostgresStoreOptions {
  /** Connections kept at most (count). Default 10. */
  maxConnections?: number;
  /** A statement running longer is cancelled and its step fails (ms). Default 30,000. */
  statementTimeoutMs?: number;
  /** Waiting longer for a free connection fails the step (ms). Default 10,000. */
  connectTimeoutMs?: number;
}

/** The modules over one executor: the pool at the top level, a held client inside a transaction. */
function modules(x: Exec): ReturnType<EngineModules> {
  return {
    messages: createPgMessages(x),
    runs: createPgRuns(x),
    contents: createPgContents(x),
    viewed: createPgViewed(x),
    callLog: createCallLog(x),
    catalog: createCatalog(x),
    ingest: createPgIngest(x),
    // An edge keeps its outbox in its own SQLite file; a PostgreSQL store is a centre's.
    outbox: null,
  };
}

function createCallLog(x: Exec): CallLogApi {
  return {
    async insert(r: ToolCallRecord) {
      await x.q.query(
        `INSERT INTO tool_call_log (id, tool, repository, ok, error_code, duration_ms, created_at, arguments,
           commit_hash, commit_summary) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          r.id,
          r.tool,
          r.repository,
          r.ok ? 1 : 0,
          r.error_code,
          r.duration_ms,
          r.created_at,
          r.arguments,
          r.commit?.hash ?? null,
          r.commit?.summary ?? null,
        ],
      );
    },
    async prune(keep) {
      await x.q.query(
        'DELETE FROM tool_call_log WHERE seq <= (SELECT seq FROM tool_call_log ORDER BY seq DESC LIMIT 1 OFFSET $1)',
        [keep],
      );
    },
    async page(limit) {
      const { rows } = await x.q.query<Record<string, unknown>>(
        `SELECT id, tool, repository, ok, error_code, duration_ms, created_at, arguments, commit_hash, commit_summary
         FROM tool_call_log ORDER BY created_at DESC, seq DESC LIMIT $1`,
        [limit],
      );
      return rows.map(({ commit_hash, commit_summary, ok, ...r }) => ({
        ...(r as Omit<ToolCallRecord, 'ok' | 'commit'>),
        ok: ok === 1,
        commit:
          commit_hash !== null && commit_summary !== null
            ? { hash: commit_hash as string, summary: commit_summary as string }
            : null,
      }));
    },
  };
}

function createCatalog(x: Exec): CatalogApi {
  const workspaces = async (sql: string, max: number) =>
    (await x.q.query<{ workspace: string }>(sql, [max])).rows.map((r) => r.workspace);
  return {
    sessionWorkspaces: (max) =>
      workspaces(
        `SELECT workspace FROM sessions WHERE workspace IS NOT NULL GROUP BY workspace
         ORDER BY MAX(updated_at) DESC LIMIT $1`,
        max,
      ),
    runWorkspaces: (max) =>
      workspaces(
        `SELECT workspace FROM runs WHERE workspace IS NOT NULL GROUP BY workspace ORDER BY MAX(started_at) DESC LIMIT $1`,
        max,
      ),
  };
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
  return buildStore(sql, createPostgresClock(), (q) => modules(legacyExecOf(q)));
}
