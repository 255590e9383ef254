import type { ViewedMark, ViewedRow } from '../../../shared/index.ts';
import type { MarkOutcome } from '../viewed.ts';
import type { ViewedApi } from '../types.ts';
import type { Exec, Queryable } from './exec.ts';

interface MarkRow {
  path: string;
  path_base64: string;
  change_id: string;
  change_seq: number;
  file_id: string;
  viewed_at: number;
}

function toMark(r: MarkRow): ViewedMark {
  const m: ViewedMark = { path: r.path, change_id: r.change_id, file_id: r.file_id, viewed_at: r.viewed_at };
  if (r.path_base64 !== '') m.path_base64 = r.path_base64;
  return m;
}

async function target(q: Queryable, sessionId: string, changeId: string, fileId: string) {
  const { rows } = await q.query<{ path: string; path_base64: string; change_seq: number }>(
    `SELECT f.path, COALESCE(f.path_base64, '') AS path_base64, c.seq AS change_seq
     FROM workspace_run_change_files f
     JOIN workspace_run_changes c ON c.session_id = f.session_id AND c.change_id = f.change_id
     WHERE f.session_id = $1 AND f.change_id = $2 AND f.id = $3`,
    [sessionId, changeId, fileId],
  );
  return rows[0];
}

async function markOf(q: Queryable, sessionId: string, path: string, pathBase64: string) {
  // Locked: a concurrent mark or unmark of the same path waits for this one.
  const { rows } = await q.query<MarkRow>(
    `SELECT path, path_base64, change_id, change_seq, file_id, viewed_at FROM viewed_marks
     WHERE session_id = $1 AND path = $2 AND path_base64 = $3 FOR UPDATE`,
    [sessionId, path, pathBase64],
  );
  return rows[0];
}

export function createPgViewed(x: Exec): ViewedApi {
  return {
    list: (sessionId) =>
      x.read(async (q) => {
        const marks = await q.query<MarkRow>(
          `SELECT path, path_base64, change_id, change_seq, file_id, viewed_at FROM viewed_marks
         WHERE session_id = $1 ORDER BY viewed_at, path, path_base64`,
          [sessionId],
        );
        const rows = await q.query<ViewedRow>(
          `SELECT f.change_id, f.id AS file_id, f.ord FROM viewed_marks m
         JOIN workspace_run_change_files f
           ON f.session_id = m.session_id AND f.path = m.path AND COALESCE(f.path_base64, '') = m.path_base64
         JOIN workspace_run_changes c ON c.session_id = f.session_id AND c.change_id = f.change_id
         WHERE m.session_id = $1 AND c.seq <= m.change_seq
         ORDER BY f.change_id, f.ord`,
          [sessionId],
        );
        return { viewed: marks.rows.map(toMark), rows: rows.rows };
      }),
    mark: (sessionId, changeId, fileId, at) =>
      x.atomic(async (q): Promise<MarkOutcome> => {
        const t = await target(q, sessionId, changeId, fileId);
        if (!t) return 'no_such_file';
        const known = await markOf(q, sessionId, t.path, t.path_base64);
        if (known && known.change_seq >= t.change_seq) return 'unchanged';
        await q.query(
          `INSERT INTO viewed_marks (session_id, path, path_base64, change_id, change_seq, file_id, viewed_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (session_id, path, path_base64) DO UPDATE SET
             change_id = excluded.change_id, change_seq = excluded.change_seq, file_id = excluded.file_id,
             viewed_at = excluded.viewed_at`,
          [sessionId, t.path, t.path_base64, changeId, t.change_seq, fileId, at],
        );
        return 'changed';
      }),
    unmark: (sessionId, changeId, fileId) =>
      x.atomic(async (q): Promise<MarkOutcome> => {
        const t = await target(q, sessionId, changeId, fileId);
        if (!t) return 'no_such_file';
        const known = await markOf(q, sessionId, t.path, t.path_base64);
        if (!known || known.change_seq < t.change_seq) return 'unchanged';
        await q.query('DELETE FROM viewed_marks WHERE session_id = $1 AND path = $2 AND path_base64 = $3', [
          sessionId,
          t.path,
          t.path_base64,
        ]);
        return 'changed';
      }),
    async resetByChange(sessionId, changeId) {
      const { rowCount } = await x.q.query(
        `DELETE FROM viewed_marks AS m WHERE m.session_id = $1 AND (
           EXISTS (SELECT 1 FROM workspace_run_change_files f
                   WHERE f.session_id = m.session_id AND f.path = m.path AND f.change_id = $2
                     AND COALESCE(f.path_base64, '') = m.path_base64)
           OR EXISTS (SELECT 1 FROM workspace_run_change_files f
                   WHERE f.session_id = m.session_id AND f.old_path = m.path AND f.change_id = $2
                     AND COALESCE(f.old_path_base64, '') = m.path_base64))`,
        [sessionId, changeId],
      );
      return rowCount ?? 0;
    },
  };
}
