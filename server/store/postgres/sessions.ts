import type { Session, SessionFilter, SessionStatusFilter, WorkspaceCount } from '../../../shared/index.ts';
import { likePattern } from '../sessions.ts';
import type { SessionsApi } from '../types.ts';
import { bump } from './clock.ts';
import type { Exec } from './exec.ts';

// The same derived counts as the SQLite store (see its module for why each is computed so).
const SESSION_COLUMNS = `s.id, s.title, s.workspace, s.created_at, s.updated_at,
  (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id) AS run_count,
  (SELECT COUNT(DISTINCT f.path) FROM workspace_run_change_files f
     WHERE f.session_id = s.id AND f.change_id >= 'run:' AND f.change_id < 'run;')
  + (SELECT COALESCE(SUM(c.omitted_count), 0) FROM workspace_run_changes c
     WHERE c.session_id = s.id AND c.source <> 'tool') AS changed_count,
  (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id AND r.status = 'failed') AS failed_run_count,
  (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id AND r.status = 'running') AS running_run_count,
  (SELECT r.status FROM runs r WHERE r.session_id = s.id ORDER BY r.started_at DESC, r.seq DESC LIMIT 1)
    AS last_run_status`;

const STATUS_CLAUSES: Record<SessionStatusFilter, string> = {
  running: `EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id AND r.status = 'running')`,
  failed: `EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id AND r.status = 'failed')`,
  completed: `EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id)
    AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id AND r.status <> 'completed')`,
  none: `NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id)`,
};

/** WHERE clauses for a filter, their values numbered from `$first`. */
function filterSql(filter: SessionFilter, first: number): { sql: string; values: unknown[] } {
  const clauses: string[] = [];
  const values: unknown[] = [];
  const param = (v: unknown) => {
    values.push(v);
    return `$${first + values.length - 1}`;
  };
  if (filter.q !== undefined && filter.q !== '') {
    // SQLite's LIKE folds ASCII letters only; lower() under the columns' "C" collation does the same.
    const p = param(likePattern(filter.q).replace(/[A-Z]/g, (c) => c.toLowerCase()));
    clauses.push(`(lower(s.title) LIKE ${p} ESCAPE '\\' OR lower(s.workspace) LIKE ${p} ESCAPE '\\')`);
  }
  if (filter.status !== undefined) clauses.push(STATUS_CLAUSES[filter.status]);
  if (filter.workspace !== undefined) clauses.push(`s.workspace = ${param(filter.workspace)}`);
  if (filter.from !== undefined) clauses.push(`s.updated_at >= ${param(filter.from)}`);
  if (filter.to !== undefined) clauses.push(`s.created_at <= ${param(filter.to)}`);
  return { sql: clauses.map((c) => ` AND ${c}`).join(''), values };
}

export function createPgSessions(x: Exec): SessionsApi {
  return {
    async get(id) {
      const { rows } = await x.q.query<Session>(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.id = $1`, [id]);
      return rows[0] ?? null;
    },
    async exists(id) {
      const { rowCount } = await x.q.query('SELECT 1 FROM sessions WHERE id = $1', [id]);
      return (rowCount ?? 0) > 0;
    },
    touch: (id, now) =>
      x.atomic(async (q) => {
        await bump(q, id);
        await q.query(
          `INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES ($1, NULL, NULL, $2, $2)
           ON CONFLICT (id) DO UPDATE SET updated_at = GREATEST(sessions.updated_at, excluded.updated_at)`,
          [id, now],
        );
      }),
    upsert: (id, fields, now) =>
      x.atomic(async (q) => {
        await bump(q, id);
        await q.query(
          `INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES ($1, $2, $3, $6, $6)
           ON CONFLICT (id) DO UPDATE SET
             title = CASE WHEN $4 THEN excluded.title ELSE sessions.title END,
             workspace = CASE WHEN $5 THEN excluded.workspace ELSE sessions.workspace END,
             updated_at = GREATEST(sessions.updated_at, excluded.updated_at)`,
          [
            id,
            fields.title ?? null,
            fields.workspace ?? null,
            fields.title !== undefined,
            fields.workspace !== undefined,
            now,
          ],
        );
      }),
    adoptWorkspace: (id, workspace) =>
      x.atomic(async (q) => {
        await bump(q, id);
        await q.query('UPDATE sessions SET workspace = $1 WHERE id = $2 AND workspace IS NULL', [workspace, id]);
      }),
    page: (limit, before, filter = {}) =>
      x.read(async (q) => {
        const f = filterSql(filter, 3);
        const { rows } = await q.query<Session>(
          `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.updated_at < $1${f.sql}
         ORDER BY s.updated_at DESC, s.id DESC LIMIT $2`,
          [before ?? Number.MAX_SAFE_INTEGER, limit, ...f.values],
        );
        const last = rows[rows.length - 1];
        if (!last || rows.length < limit) return { sessions: rows, next_before: null };
        const ties = await q.query<Session>(
          `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.updated_at = $1 AND s.id < $2${f.sql} ORDER BY s.id DESC`,
          [last.updated_at, last.id, ...f.values],
        );
        rows.push(...ties.rows);
        const g = filterSql(filter, 2);
        const older = await q.query(`SELECT 1 FROM sessions s WHERE s.updated_at < $1${g.sql} LIMIT 1`, [
          last.updated_at,
          ...g.values,
        ]);
        return { sessions: rows, next_before: (older.rowCount ?? 0) > 0 ? last.updated_at : null };
      }),
    async workspaces(max) {
      const { rows } = await x.q.query<WorkspaceCount>(
        `SELECT workspace, COUNT(*) AS session_count FROM sessions WHERE workspace IS NOT NULL
         GROUP BY workspace ORDER BY session_count DESC, workspace LIMIT $1`,
        [max + 1],
      );
      const kept = rows
        .slice(0, max)
        .sort((a, b) => (a.workspace < b.workspace ? -1 : a.workspace > b.workspace ? 1 : 0));
      return { workspaces: kept, truncated: rows.length > max };
    },
    delete: (id) =>
      x.atomic(async (q) => {
        await bump(q, id);
        const { rowCount } = await q.query('DELETE FROM sessions WHERE id = $1', [id]);
        return (rowCount ?? 0) > 0;
      }),
  };
}
