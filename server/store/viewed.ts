import type { ViewedMark, ViewedRow } from '../../shared/index.ts';
import { perDialect } from './sql/dialect.ts';
import type { Sql } from './sql/types.ts';
import type { ViewedApi } from './types.ts';

/**
 * Viewed marks (migration 0005): one per session and path, naming the file row it was made on. A
 * mark covers the path's rows in its change and in every earlier change (by the changes' storing
 * order, `seq`); the change that stores a later edit of the path removes it (`resetByChange`, called
 * in the storing transaction).
 */

interface MarkRow {
  path: string;
  path_base64: string;
  change_id: string;
  change_seq: number;
  file_id: string;
  viewed_at: number;
}

/** The file row a mark is asked for, with what the mark keys on. */
interface TargetRow {
  path: string;
  path_base64: string;
  change_seq: number;
}

/** `changed`: the marks are not what they were; `unchanged`: the call changed nothing. */
export type MarkOutcome = 'changed' | 'unchanged' | 'no_such_file';

function toMark(r: MarkRow): ViewedMark {
  const m: ViewedMark = { path: r.path, change_id: r.change_id, file_id: r.file_id, viewed_at: r.viewed_at };
  if (r.path_base64 !== '') m.path_base64 = r.path_base64;
  return m;
}

const MARK_COLUMNS = 'path, path_base64, change_id, change_seq, file_id, viewed_at';

const TEXTS = perDialect((d) => ({
  // The path's rows in the marked change and before it: the (session_id, path, change_id) index
  // finds them per mark, so the cost follows the marks, not the size of the changes (the marks stay
  // the outer loop; SQLite would otherwise walk every file row of the session).
  listRows: `SELECT f.change_id, f.id AS file_id, f.ord FROM viewed_marks m
     ${d.joinInOrder} workspace_run_change_files f
       ON f.session_id = m.session_id AND f.path = m.path AND COALESCE(f.path_base64, '') = m.path_base64
     JOIN workspace_run_changes c ON c.session_id = f.session_id AND c.change_id = f.change_id
     WHERE m.session_id = ? AND c.seq <= m.change_seq
     ORDER BY f.change_id, f.ord`,
  // Locked where rows can be: a concurrent mark or unmark of the same path waits for this one.
  markOf: `SELECT ${MARK_COLUMNS} FROM viewed_marks WHERE session_id = ? AND path = ? AND path_base64 = ?${d.forUpdate}`,
}));

const TARGET = `SELECT f.path, COALESCE(f.path_base64, '') AS path_base64, c.seq AS change_seq
     FROM workspace_run_change_files f
     JOIN workspace_run_changes c ON c.session_id = f.session_id AND c.change_id = f.change_id
     WHERE f.session_id = ? AND f.change_id = ? AND f.id = ?`;
const UPSERT = `INSERT INTO viewed_marks (session_id, path, path_base64, change_id, change_seq, file_id, viewed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (session_id, path, path_base64) DO UPDATE SET
       change_id = excluded.change_id, change_seq = excluded.change_seq, file_id = excluded.file_id,
       viewed_at = excluded.viewed_at`;
// Per mark, two index probes: the change's rows at the path, and its renames away from the path.
const RESET = `DELETE FROM viewed_marks AS m WHERE m.session_id = ? AND (
       EXISTS (SELECT 1 FROM workspace_run_change_files f
               WHERE f.session_id = m.session_id AND f.path = m.path AND f.change_id = ?
                 AND COALESCE(f.path_base64, '') = m.path_base64)
       OR EXISTS (SELECT 1 FROM workspace_run_change_files f
               WHERE f.session_id = m.session_id AND f.old_path = m.path AND f.change_id = ?
                 AND COALESCE(f.old_path_base64, '') = m.path_base64))`;

export function createViewedStore(sql: Sql): ViewedApi {
  const t = TEXTS(sql.dialect);
  const target = (q: Sql, sessionId: string, changeId: string, fileId: string) =>
    q.get<TargetRow>(TARGET, [sessionId, changeId, fileId]);
  const markOf = (q: Sql, sessionId: string, r: TargetRow) =>
    q.get<MarkRow>(t.markOf, [sessionId, r.path, r.path_base64]);
  return {
    /** The marks of a session and the rows they cover (empty for an unknown session). */
    list: (sessionId) =>
      sql.read(async (q) => {
        const marks = await q.all<MarkRow>(
          `SELECT ${MARK_COLUMNS} FROM viewed_marks WHERE session_id = ? ORDER BY viewed_at, path, path_base64`,
          [sessionId],
        );
        return { viewed: marks.map(toMark), rows: await q.all<ViewedRow>(t.listRows, [sessionId]) };
      }),
    /** Marks the path of file row `fileId` viewed as of its change. */
    mark: (sessionId, changeId, fileId, at) =>
      sql.atomic(async (q): Promise<MarkOutcome> => {
        const r = await target(q, sessionId, changeId, fileId);
        if (!r) return 'no_such_file';
        const known = await markOf(q, sessionId, r);
        // A mark made on a later change already covers this row: a stale client must not move it back.
        if (known && known.change_seq >= r.change_seq) return 'unchanged';
        await q.run(UPSERT, [sessionId, r.path, r.path_base64, changeId, r.change_seq, fileId, at]);
        return 'changed';
      }),
    /** Removes the mark covering file row `fileId` (the whole path's mark). */
    unmark: (sessionId, changeId, fileId) =>
      sql.atomic(async (q): Promise<MarkOutcome> => {
        const r = await target(q, sessionId, changeId, fileId);
        if (!r) return 'no_such_file';
        const known = await markOf(q, sessionId, r);
        // Only a mark that covers the row: a mark made on an earlier change does not reach a later row.
        if (!known || known.change_seq < r.change_seq) return 'unchanged';
        await q.run('DELETE FROM viewed_marks WHERE session_id = ? AND path = ? AND path_base64 = ?', [
          sessionId,
          r.path,
          r.path_base64,
        ]);
        return 'changed';
      }),
    /**
     * Removes the marks of every path the stored change `changeId` touches (its paths and its
     * renames' old paths). Call it in the transaction that stores the change. Returns how many went.
     */
    resetByChange: (sessionId, changeId) =>
      sql.atomic(async (q) => {
        if ((await q.get('SELECT 1 AS one FROM viewed_marks WHERE session_id = ? LIMIT 1', [sessionId])) === undefined)
          return 0;
        return q.run(RESET, [sessionId, changeId, changeId]);
      }),
  };
}
