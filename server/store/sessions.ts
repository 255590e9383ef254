import type {
  Session,
  SessionFilter,
  SessionStatusFilter,
  WorkspaceCount,
  WorkspacesResponse,
} from '../../shared/index.ts';
import type { WriteClock } from './sql/clock.ts';
import { likePattern, perDialect, SQLITE } from './sql/dialect.ts';
import type { Dialect, Param, Sql } from './sql/types.ts';
import type { SessionsApi } from './types.ts';

// The counts are derived, so they can never drift from the rows they count.
// changed_count: a path changed by several runs counts once, read from the session/path index alone
// (run-level change ids are exactly those starting "run:", so no join to the change rows);
// files a change did not store cannot be told apart, so its omitted_count is added as it is.
// SQLite is told the index: correlated to the outer row, its planner otherwise picks the
// (session_id, change_id) index for the change_id range and reads every file row through a temp
// b-tree, 5-10x slower for a session of 10,000 stored files.
const changedCount = (d: Dialect) => `(SELECT COUNT(DISTINCT f.path) FROM workspace_run_change_files f
     ${d.indexedBy('idx_workspace_run_change_files_session_path')}
     WHERE f.session_id = s.id AND f.change_id >= 'run:' AND f.change_id < 'run;')
  + (SELECT COALESCE(SUM(c.omitted_count), 0) FROM workspace_run_changes c
     WHERE c.session_id = s.id AND c.source <> 'tool')`;
const ROW_COLUMNS = `s.id, s.title, s.workspace, s.created_at, s.updated_at,
  (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id) AS run_count,
  (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id AND r.status = 'failed') AS failed_run_count,
  (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id AND r.status = 'running') AS running_run_count,
  (SELECT r.status FROM runs r WHERE r.session_id = s.id ORDER BY r.started_at DESC, r.seq DESC LIMIT 1)
    AS last_run_status,
  (SELECT SUM(r.usage_input) FROM runs r WHERE r.session_id = s.id) AS usage_input,
  (SELECT SUM(r.usage_output) FROM runs r WHERE r.session_id = s.id) AS usage_output,
  (SELECT SUM(r.usage_cache_read) FROM runs r WHERE r.session_id = s.id) AS usage_cache_read,
  (SELECT SUM(r.usage_cache_write) FROM runs r WHERE r.session_id = s.id) AS usage_cache_write,
  (SELECT SUM(r.usage_cost_usd) FROM runs r WHERE r.session_id = s.id) AS usage_cost_usd`;

const TEXTS = perDialect((d) => {
  const columns = `${ROW_COLUMNS}, ${changedCount(d)} AS changed_count`;
  return {
    columns,
    get: `SELECT ${columns} FROM sessions s WHERE s.id = ?`,
    getKept: `SELECT ${ROW_COLUMNS} FROM sessions s WHERE s.id = ?`,
    touch: `INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES (?, NULL, NULL, ?, ?)
     ON CONFLICT (id) DO UPDATE SET updated_at = ${d.greatest('sessions.updated_at', 'excluded.updated_at')}`,
    upsert: `INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET
       title = CASE WHEN ? = 1 THEN excluded.title ELSE sessions.title END,
       workspace = CASE WHEN ? = 1 THEN excluded.workspace ELSE sessions.workspace END,
       updated_at = ${d.greatest('sessions.updated_at', 'excluded.updated_at')}`,
  };
});

/** The columns of a session's row as SQLite reads them (its query plan is checked). */
export const SESSION_COLUMNS = TEXTS(SQLITE).columns;

/** Sessions whose changed_count is kept between reads of their row. */
const MAX_KEPT_TOTALS = 1024;

const STATUS_CLAUSES: Record<SessionStatusFilter, string> = {
  running: `EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id AND r.status = 'running')`,
  failed: `EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id AND r.status = 'failed')`,
  completed: `EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id)
    AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id AND r.status <> 'completed')`,
  none: `NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id)`,
};

/** The clauses a filter adds (` AND ...`) and their values, in order. */
function filterSql(d: Dialect, filter: SessionFilter): { sql: string; values: Param[] } {
  const clauses: string[] = [];
  const values: Param[] = [];
  if (filter.q !== undefined && filter.q !== '') {
    // LIKE folds ASCII case; ESCAPE makes the pattern's own % and _ literal.
    const pattern = d.likeValue(likePattern(filter.q));
    clauses.push(`(${d.likeFolded('s.title')} OR ${d.likeFolded('s.workspace')})`);
    values.push(pattern, pattern);
  }
  if (filter.status !== undefined) clauses.push(STATUS_CLAUSES[filter.status]);
  if (filter.workspace !== undefined) {
    clauses.push('s.workspace = ?');
    values.push(filter.workspace);
  }
  if (filter.from !== undefined) {
    clauses.push('s.updated_at >= ?');
    values.push(filter.from);
  }
  if (filter.to !== undefined) {
    clauses.push('s.created_at <= ?');
    values.push(filter.to);
  }
  return { sql: clauses.map((c) => ` AND ${c}`).join(''), values };
}

export interface SessionPage {
  sessions: Session[];
  next_before: number | null;
}

/** What the sessions module keeps between calls (one per store, shared by its transactions). */
export interface SessionsKept {
  changedCounts: Map<string, { version: string; count: number }>;
}

export const createSessionsKept = (): SessionsKept => ({ changedCounts: new Map() });

export function createSessionStore(sql: Sql, clock: WriteClock, kept: SessionsKept): SessionsApi {
  const t = TEXTS(sql.dialect);
  const { changedCounts } = kept;
  return {
    // The distinct-path total reads every stored file row's index entry (about 1 ms per 10,000 on
    // SQLite), and a session's row is read on every event of its runs; the total only moves when its
    // changes do, so SQLite keeps it by the changes' clock.
    get: (id) =>
      sql.dialect.blocking
        ? sql.read(async (q) => {
            const version = await clock.partVersion(q, id, 'changes');
            const known = changedCounts.get(id);
            changedCounts.delete(id);
            const keep = known?.version === version;
            const row = await q.get<Omit<SessionRow, 'changed_count'> & { changed_count?: number }>(
              keep ? t.getKept : t.get,
              [id],
            );
            if (!row) return null;
            const count = row.changed_count ?? known!.count;
            changedCounts.set(id, { version, count });
            if (changedCounts.size > MAX_KEPT_TOTALS) changedCounts.delete(changedCounts.keys().next().value!);
            return toSession({ ...row, changed_count: count });
          })
        : sql.get<SessionRow>(t.get, [id]).then((row) => (row ? toSession(row) : null)),
    async exists(id) {
      return (await sql.get('SELECT 1 AS one FROM sessions WHERE id = ?', [id])) !== undefined;
    },
    touch: (id, now) =>
      sql.atomic(async (q) => {
        clock.bump(q, id, 'session');
        await q.run(t.touch, [id, now, now]);
      }),
    upsert: (id, fields, now) =>
      sql.atomic(async (q) => {
        clock.bump(q, id, 'session');
        await q.run(t.upsert, [
          id,
          fields.title ?? null,
          fields.workspace ?? null,
          now,
          now,
          fields.title === undefined ? 0 : 1,
          fields.workspace === undefined ? 0 : 1,
        ]);
      }),
    /** A session without a workspace takes the first one a run names (the git tools use it as default). */
    adoptWorkspace: (id, workspace) =>
      sql.atomic(async (q) => {
        clock.bump(q, id, 'session');
        await q.run('UPDATE sessions SET workspace = ? WHERE id = ? AND workspace IS NULL', [workspace, id]);
      }),
    /**
     * Newest `updated_at` first, only sessions matching every given filter. Sessions sharing the
     * boundary `updated_at` all go on this page, so a `before = next_before` cursor never skips one
     * (a page may exceed `limit` by those ties).
     */
    page: (limit, before, filter = {}) =>
      sql.read(async (q) => {
        const f = filterSql(q.dialect, filter);
        const rows = await q.all<SessionRow>(
          `SELECT ${t.columns} FROM sessions s WHERE s.updated_at < ?${f.sql}
           ORDER BY s.updated_at DESC, s.id DESC LIMIT ?`,
          [before ?? Number.MAX_SAFE_INTEGER, ...f.values, limit],
        );
        const last = rows[rows.length - 1];
        if (!last || rows.length < limit) return { sessions: rows.map(toSession), next_before: null };
        rows.push(
          ...(await q.all<SessionRow>(
            `SELECT ${t.columns} FROM sessions s WHERE s.updated_at = ? AND s.id < ?${f.sql} ORDER BY s.id DESC`,
            [last.updated_at, last.id, ...f.values],
          )),
        );
        const older = await q.get(`SELECT 1 AS one FROM sessions s WHERE s.updated_at < ?${f.sql} LIMIT 1`, [
          last.updated_at,
          ...f.values,
        ]);
        return { sessions: rows.map(toSession), next_before: older !== undefined ? last.updated_at : null };
      }),
    /** Distinct workspaces of the stored sessions with their session counts, in path order; at most `max`. */
    async workspaces(max): Promise<WorkspacesResponse> {
      // The most used first, one past the bound to tell whether some were left out.
      const rows = await sql.all<WorkspaceCount>(
        `SELECT workspace, COUNT(*) AS session_count FROM sessions WHERE workspace IS NOT NULL
         GROUP BY workspace ORDER BY session_count DESC, workspace LIMIT ?`,
        [max + 1],
      );
      const kept = rows
        .slice(0, max)
        .sort((a, b) => (a.workspace < b.workspace ? -1 : a.workspace > b.workspace ? 1 : 0));
      return { workspaces: kept, truncated: rows.length > max };
    },
    /** Removes the session; its messages, runs, tool calls and changes go with it (cascade). */
    delete: (id) =>
      sql.atomic(async (q) => {
        clock.bump(q, id);
        return (await q.run('DELETE FROM sessions WHERE id = ?', [id])) > 0;
      }),
  };
}

/** A session row as read: the DTO's fields, its usage summed per column. */
type SessionRow = Omit<Session, 'usage'> & {
  usage_input: number | null;
  usage_output: number | null;
  usage_cache_read: number | null;
  usage_cache_write: number | null;
  usage_cost_usd: number | null;
};

/** The DTO's fields in their served order. */
function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    title: row.title,
    workspace: row.workspace,
    created_at: row.created_at,
    updated_at: row.updated_at,
    run_count: row.run_count,
    changed_count: row.changed_count,
    failed_run_count: row.failed_run_count,
    running_run_count: row.running_run_count,
    last_run_status: row.last_run_status,
    // The four are summed over the same runs (a run has all of them or none).
    usage:
      row.usage_input === null
        ? null
        : {
            input: row.usage_input,
            output: row.usage_output ?? 0,
            cache_read: row.usage_cache_read ?? 0,
            cache_write: row.usage_cache_write ?? 0,
            // Summed over the runs that were priced: absent when none was.
            ...(row.usage_cost_usd !== null ? { cost_usd: row.usage_cost_usd } : {}),
          },
  };
}
