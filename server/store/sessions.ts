import type { Session } from '../../shared/index.ts';
import type { Db } from './database.ts';
import type { WriteClock } from './write-clock.ts';

/** A session's row is its DTO: the counts are computed by the query. */
type SessionRow = Session;

// run_count / changed_count are derived, so they can never drift from the rows they count.
const SESSION_COLUMNS = `s.id, s.title, s.workspace, s.created_at, s.updated_at,
  (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id) AS run_count,
  (SELECT COALESCE(SUM(c.changed_count), 0) FROM workspace_run_changes c
     WHERE c.session_id = s.id AND c.source <> 'tool') AS changed_count`;

function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    title: row.title,
    workspace: row.workspace,
    created_at: row.created_at,
    updated_at: row.updated_at,
    run_count: row.run_count,
    changed_count: row.changed_count,
  };
}

export interface SessionPage {
  sessions: Session[];
  next_before: number | null;
}

export function createSessionStore(db: Db, clock: WriteClock) {
  const getStmt = db.prepare<[string], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.id = ?`);
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
  const adoptStmt = db.prepare<[string, string]>(
    'UPDATE sessions SET workspace = ? WHERE id = ? AND workspace IS NULL',
  );
  const pageStmt = db.prepare<[number, number], SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.updated_at < ? ORDER BY s.updated_at DESC, s.id DESC LIMIT ?`,
  );
  const tiesStmt = db.prepare<[number, string], SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.updated_at = ? AND s.id < ? ORDER BY s.id DESC`,
  );
  const olderStmt = db.prepare<[number], { one: number }>('SELECT 1 AS one FROM sessions WHERE updated_at < ? LIMIT 1');
  const deleteStmt = db.prepare<[string]>('DELETE FROM sessions WHERE id = ?');

  return {
    get(id: string): Session | null {
      const row = getStmt.get(id);
      return row ? toSession(row) : null;
    },
    exists(id: string): boolean {
      return existsStmt.get(id) !== undefined;
    },
    /** Creates the session when an event first names it; otherwise moves its `updated_at` forward. */
    touch(id: string, now: number): void {
      clock.bump(id);
      touchStmt.run(id, now, now);
    },
    /** `session.upsert`: only the fields given are changed. */
    upsert(id: string, fields: { title?: string; workspace?: string }, now: number): void {
      clock.bump(id);
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
      clock.bump(id);
      adoptStmt.run(workspace, id);
    },
    /**
     * Newest `updated_at` first. Sessions sharing the boundary `updated_at` all go on this page, so a
     * `before = next_before` cursor never skips one (a page may exceed `limit` by those ties).
     */
    page(limit: number, before: number | null): SessionPage {
      const rows = pageStmt.all(before ?? Number.MAX_SAFE_INTEGER, limit);
      const last = rows[rows.length - 1];
      if (!last || rows.length < limit) return { sessions: rows.map(toSession), next_before: null };
      rows.push(...tiesStmt.all(last.updated_at, last.id));
      const more = olderStmt.get(last.updated_at) !== undefined;
      return { sessions: rows.map(toSession), next_before: more ? last.updated_at : null };
    },
    /** Removes the session; its messages, runs, tool calls and changes go with it (cascade). */
    delete(id: string): boolean {
      clock.bump(id);
      return deleteStmt.run(id).changes > 0;
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
