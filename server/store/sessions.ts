import type {
  Session,
  SessionFilter,
  SessionStatusFilter,
  WorkspaceCount,
  WorkspacesResponse,
} from '../../shared/index.ts';
import type { Statement } from 'better-sqlite3';
import type { Db } from './database.ts';
import type { WriteClock } from './write-clock.ts';

/** A session's row is its DTO: the counts are computed by the query. */
type SessionRow = Session;

// The counts are derived, so they can never drift from the rows they count.
// changed_count: a path changed by several runs counts once, read from the session/path index alone
// (run-level change ids are exactly those starting "run:", so no join to the change rows);
// files a change did not store cannot be told apart, so its omitted_count is added as it is.
// The index is named: correlated to the outer row, SQLite's planner otherwise picks the
// (session_id, change_id) index for the change_id range and reads every file row through a temp
// b-tree, 5-10x slower for a session of 10,000 stored files.
const CHANGED_COUNT = `(SELECT COUNT(DISTINCT f.path) FROM workspace_run_change_files f
     INDEXED BY idx_workspace_run_change_files_session_path
     WHERE f.session_id = s.id AND f.change_id >= 'run:' AND f.change_id < 'run;')
  + (SELECT COALESCE(SUM(c.omitted_count), 0) FROM workspace_run_changes c
     WHERE c.session_id = s.id AND c.source <> 'tool')`;
const ROW_COLUMNS = `s.id, s.title, s.workspace, s.created_at, s.updated_at,
  (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id) AS run_count,
  (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id AND r.status = 'failed') AS failed_run_count,
  (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id AND r.status = 'running') AS running_run_count,
  (SELECT r.status FROM runs r WHERE r.session_id = s.id ORDER BY r.started_at DESC, r.seq DESC LIMIT 1)
    AS last_run_status`;
export const SESSION_COLUMNS = `${ROW_COLUMNS}, ${CHANGED_COUNT} AS changed_count`;

/** Sessions whose changed_count is kept between reads of their row. */
const MAX_KEPT_TOTALS = 1024;

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
  };
}

/** `%` and `_` in a search are literal characters, not wildcards. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const STATUS_CLAUSES: Record<SessionStatusFilter, string> = {
  running: `EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id AND r.status = 'running')`,
  failed: `EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id AND r.status = 'failed')`,
  completed: `EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id)
    AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id AND r.status <> 'completed')`,
  none: `NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id)`,
};

/** The WHERE clauses and named parameters a filter adds; the shape keys the prepared statements. */
function filterSql(filter: SessionFilter): { clauses: string[]; params: Record<string, string | number> } {
  const clauses: string[] = [];
  const params: Record<string, string | number> = {};
  if (filter.q !== undefined && filter.q !== '') {
    // LIKE folds ASCII case; ESCAPE makes the pattern's own % and _ literal.
    clauses.push(`(s.title LIKE @q ESCAPE '\\' OR s.workspace LIKE @q ESCAPE '\\')`);
    params.q = likePattern(filter.q);
  }
  if (filter.status !== undefined) clauses.push(STATUS_CLAUSES[filter.status]);
  if (filter.workspace !== undefined) {
    clauses.push('s.workspace = @workspace');
    params.workspace = filter.workspace;
  }
  if (filter.from !== undefined) {
    clauses.push('s.updated_at >= @from');
    params.from = filter.from;
  }
  if (filter.to !== undefined) {
    clauses.push('s.created_at <= @to');
    params.to = filter.to;
  }
  return { clauses, params };
}

export interface SessionPage {
  sessions: Session[];
  next_before: number | null;
}

export function createSessionStore(db: Db, clock: WriteClock) {
  const getStmt = db.prepare<[string], Omit<SessionRow, 'changed_count'>>(
    `SELECT ${ROW_COLUMNS} FROM sessions s WHERE s.id = ?`,
  );
  const changedCountStmt = db
    .prepare<[string], number>(`SELECT ${CHANGED_COUNT} AS changed_count FROM sessions s WHERE s.id = ?`)
    .pluck();
  // The distinct-path total reads every stored file row's index entry (about 1 ms per 10,000), and a
  // session's row is read on every event of its runs; the total only moves when its changes do.
  const changedCounts = new Map<string, { version: string; count: number }>();
  function changedCount(id: string): number {
    const version = clock.partVersion(id, 'changes');
    const kept = changedCounts.get(id);
    changedCounts.delete(id);
    const count = kept?.version === version ? kept.count : (changedCountStmt.get(id) ?? 0);
    changedCounts.set(id, { version, count });
    if (changedCounts.size > MAX_KEPT_TOTALS) changedCounts.delete(changedCounts.keys().next().value!);
    return count;
  }
  const existsStmt = db.prepare<[string], { one: number }>('SELECT 1 AS one FROM sessions WHERE id = ?');
  const touchStmt = db.prepare<[string, number, number]>(
    `INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES (?, NULL, NULL, ?, ?)
     ON CONFLICT(id) DO UPDATE SET updated_at = MAX(updated_at, excluded.updated_at)`,
  );
  const upsertStmt = db.prepare(
    `INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES (@id, @title, @workspace, @now, @now)
     ON CONFLICT(id) DO UPDATE SET
       title = CASE WHEN @set_title THEN excluded.title ELSE title END,
       workspace = CASE WHEN @set_workspace THEN excluded.workspace ELSE workspace END,
       updated_at = MAX(updated_at, excluded.updated_at)`,
  );
  // The most used first, one past the bound to tell whether some were left out.
  const workspacesStmt = db.prepare<[number], WorkspaceCount>(
    `SELECT workspace, COUNT(*) AS session_count FROM sessions WHERE workspace IS NOT NULL
     GROUP BY workspace ORDER BY session_count DESC, workspace LIMIT ?`,
  );
  const adoptStmt = db.prepare<[string, string]>(
    'UPDATE sessions SET workspace = ? WHERE id = ? AND workspace IS NULL',
  );
  type PageStatements = {
    page: Statement<Record<string, string | number>, SessionRow>;
    ties: Statement<Record<string, string | number>, SessionRow>;
    older: Statement<Record<string, string | number>, { one: number }>;
  };
  // One set of statements per combination of filters (at most 2^5), prepared on first use.
  const pageStatements = new Map<string, PageStatements>();
  function statementsFor(clauses: string[]): PageStatements {
    const key = clauses.join('\n');
    let found = pageStatements.get(key);
    if (!found) {
      const and = clauses.map((c) => ` AND ${c}`).join('');
      found = {
        page: db.prepare(
          `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.updated_at < @before${and}
           ORDER BY s.updated_at DESC, s.id DESC LIMIT @limit`,
        ),
        ties: db.prepare(
          `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.updated_at = @at AND s.id < @id${and} ORDER BY s.id DESC`,
        ),
        older: db.prepare(`SELECT 1 AS one FROM sessions s WHERE s.updated_at < @at${and} LIMIT 1`),
      };
      pageStatements.set(key, found);
    }
    return found;
  }
  const deleteStmt = db.prepare<[string]>('DELETE FROM sessions WHERE id = ?');

  return {
    get(id: string): Session | null {
      const row = getStmt.get(id);
      return row ? toSession({ ...row, changed_count: changedCount(id) }) : null;
    },
    exists(id: string): boolean {
      return existsStmt.get(id) !== undefined;
    },
    /** Creates the session when an event first names it; otherwise moves its `updated_at` forward. */
    touch(id: string, now: number): void {
      clock.bump(id, 'session');
      touchStmt.run(id, now, now);
    },
    /** `session.upsert`: only the fields given are changed. */
    upsert(id: string, fields: { title?: string; workspace?: string }, now: number): void {
      clock.bump(id, 'session');
      upsertStmt.run({
        id,
        title: fields.title ?? null,
        workspace: fields.workspace ?? null,
        set_title: fields.title === undefined ? 0 : 1,
        set_workspace: fields.workspace === undefined ? 0 : 1,
        now,
      });
    },
    /** A session without a workspace takes the first one a run names (the git tools use it as default). */
    adoptWorkspace(id: string, workspace: string): void {
      clock.bump(id, 'session');
      adoptStmt.run(workspace, id);
    },
    /**
     * Newest `updated_at` first, only sessions matching every given filter. Sessions sharing the boundary `updated_at` all go on this page, so a
     * `before = next_before` cursor never skips one (a page may exceed `limit` by those ties).
     */
    page(limit: number, before: number | null, filter: SessionFilter = {}): SessionPage {
      const { clauses, params } = filterSql(filter);
      const st = statementsFor(clauses);
      const rows = st.page.all({ ...params, before: before ?? Number.MAX_SAFE_INTEGER, limit });
      const last = rows[rows.length - 1];
      if (!last || rows.length < limit) return { sessions: rows.map(toSession), next_before: null };
      rows.push(...st.ties.all({ ...params, at: last.updated_at, id: last.id }));
      const more = st.older.get({ ...params, at: last.updated_at }) !== undefined;
      return { sessions: rows.map(toSession), next_before: more ? last.updated_at : null };
    },
    /** Distinct workspaces of the stored sessions with their session counts, in path order; at most `max`. */
    workspaces(max: number): WorkspacesResponse {
      const rows = workspacesStmt.all(max + 1);
      const kept = rows
        .slice(0, max)
        .sort((a, b) => (a.workspace < b.workspace ? -1 : a.workspace > b.workspace ? 1 : 0));
      return { workspaces: kept, truncated: rows.length > max };
    },
    /** Removes the session; its messages, runs, tool calls and changes go with it (cascade). */
    delete(id: string): boolean {
      clock.bump(id);
      return deleteStmt.run(id).changes > 0;
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
