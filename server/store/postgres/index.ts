import pg from 'pg';
import type { ToolCallRecord } from '../../../shared/index.ts';
import type { CallLogApi, CatalogApi, Store, StoreTx } from '../types.ts';
import { createPgChanges } from './changes.ts';
import { createPgClock } from './clock.ts';
import { createPgContents } from './contents.ts';
import { clientExec, inSavepoint, inTransaction, poolExec, TYPES, type Exec, type Queryable } from './exec.ts';
import { createPgIngest } from './ingest.ts';
import { createPgMessages } from './messages.ts';
import { applyPgMigrations } from './migrate.ts';
import { createPgReviews } from './reviews.ts';
import { createPgRuns } from './runs.ts';
import { createPgSessions } from './sessions.ts';
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

/** The modules over one executor: the pool at the top level, a held client inside a transaction. */
function modules(x: Exec, transaction: StoreTx['transaction']): StoreTx {
  return {
    sessions: createPgSessions(x),
    messages: createPgMessages(x),
    runs: createPgRuns(x),
    changes: createPgChanges(x),
    contents: createPgContents(x),
    viewed: createPgViewed(x),
    reviews: createPgReviews(x),
    callLog: createCallLog(x),
    catalog: createCatalog(x),
    ingest: createPgIngest(x),
    // An edge keeps its outbox in its own SQLite file; a PostgreSQL store is a centre's.
    outbox: null,
    clock: createPgClock(x.q),
    transaction,
  };
}

/**
 * The modules bound to the transaction open on `client`. Once it has ended they refuse every call:
 * the client is back in the pool, and a late write would land in someone else's work.
 */
function bound(client: pg.PoolClient): { tx: StoreTx; end(): void } {
  let ended = false;
  const guarded: Queryable = {
    bumped: new Set(),
    query: (text, values) =>
      ended
        ? Promise.reject(new Error("a transaction's store was used after the transaction ended"))
        : client.query(text, values),
  };
  const tx: StoreTx = modules(clientExec(guarded), (fn) => inSavepoint(guarded, () => fn(tx)));
  return { tx, end: () => (ended = true) };
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
  let open = 0;
  let closing: Promise<void> | null = null;
  const idle: (() => void)[] = [];
  // Order within this process, as on SQLite: a transaction runs after everything queued before it,
  // and a call made while a transaction is open or waiting runs after it, in the order made. With
  // nothing queued a call runs at once (calls run side by side on the pool's connections).
  let queue: Promise<unknown> = Promise.resolve();
  let queued = 0;
  function enqueue<T>(op: () => Promise<T>): Promise<T> {
    queued++;
    const turn = queue.then(op);
    queue = turn.catch(() => undefined);
    return turn.finally(() => queued--);
  }
  const gated = <M extends object>(m: M): M => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(m))
      out[k] =
        typeof v === 'function'
          ? (...args: unknown[]) => {
              const call = () => (v as (...a: unknown[]) => Promise<unknown>)(...args);
              return queued === 0 ? call() : enqueue(call);
            }
          : v;
    return out as M;
  };
  const plain = modules(poolExec(pool), (fn) => {
    open++;
    return enqueue(() =>
      inTransaction(pool, async (client) => {
        const b = bound(client);
        try {
          return await fn(b.tx);
        } finally {
          b.end();
        }
      }),
    ).finally(() => {
      open--;
      if (open === 0) idle.splice(0).forEach((r) => r());
    });
  });
  const top: StoreTx = {
    sessions: gated(plain.sessions),
    messages: gated(plain.messages),
    runs: gated(plain.runs),
    changes: gated(plain.changes),
    contents: gated(plain.contents),
    viewed: gated(plain.viewed),
    reviews: gated(plain.reviews),
    callLog: gated(plain.callLog),
    catalog: gated(plain.catalog),
    ingest: gated(plain.ingest),
    outbox: null,
    clock: gated(plain.clock),
    transaction: plain.transaction,
  };
  return {
    engine: 'postgres',
    ...top,
    close() {
      closing ??= (async () => {
        if (open > 0) await new Promise<void>((r) => idle.push(r));
        await pool.end();
      })();
      return closing;
    },
  };
}
