import type { ViewedMark, ViewedResponse, ViewedRow } from '../../shared/index.ts';
import type { Db } from './database.ts';

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

export function createViewedStore(db: Db) {
  const listMarks = db.prepare<[string], MarkRow>(
    `SELECT path, path_base64, change_id, change_seq, file_id, viewed_at FROM viewed_marks
     WHERE session_id = ? ORDER BY viewed_at, path, path_base64`,
  );
  // The path's rows in the marked change and before it: the (session_id, path, change_id) index
  // finds them per mark, so the cost follows the marks, not the size of the changes (CROSS JOIN
  // keeps the marks as the outer loop; SQLite would otherwise walk every file row of the session).
  const listRows = db.prepare<[string], ViewedRow>(
    `SELECT f.change_id, f.id AS file_id, f.ord FROM viewed_marks m
     CROSS JOIN workspace_run_change_files f
       ON f.session_id = m.session_id AND f.path = m.path AND IFNULL(f.path_base64, '') = m.path_base64
     JOIN workspace_run_changes c ON c.session_id = f.session_id AND c.change_id = f.change_id
     WHERE m.session_id = ? AND c.seq <= m.change_seq
     ORDER BY f.change_id, f.ord`,
  );
  const target = db.prepare<[string, string, string], TargetRow>(
    `SELECT f.path, IFNULL(f.path_base64, '') AS path_base64, c.seq AS change_seq
     FROM workspace_run_change_files f
     JOIN workspace_run_changes c ON c.session_id = f.session_id AND c.change_id = f.change_id
     WHERE f.session_id = ? AND f.change_id = ? AND f.id = ?`,
  );
  const markOf = db.prepare<[string, string, string], MarkRow>(
    `SELECT path, path_base64, change_id, change_seq, file_id, viewed_at FROM viewed_marks
     WHERE session_id = ? AND path = ? AND path_base64 = ?`,
  );
  const upsert = db.prepare<[string, string, string, string, number, string, number]>(
    `INSERT INTO viewed_marks (session_id, path, path_base64, change_id, change_seq, file_id, viewed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (session_id, path, path_base64) DO UPDATE SET
       change_id = excluded.change_id, change_seq = excluded.change_seq, file_id = excluded.file_id,
       viewed_at = excluded.viewed_at`,
  );
  const remove = db.prepare<[string, string, string]>(
    'DELETE FROM viewed_marks WHERE session_id = ? AND path = ? AND path_base64 = ?',
  );
  const anyMark = db.prepare<[string], number>('SELECT 1 FROM viewed_marks WHERE session_id = ? LIMIT 1').pluck();
  // Per mark, two index probes: the change's rows at the path, and its renames away from the path.
  const reset = db.prepare<{ session: string; change: string }>(
    `DELETE FROM viewed_marks AS m WHERE m.session_id = @session AND (
       EXISTS (SELECT 1 FROM workspace_run_change_files f
               WHERE f.session_id = m.session_id AND f.path = m.path AND f.change_id = @change
                 AND IFNULL(f.path_base64, '') = m.path_base64)
       OR EXISTS (SELECT 1 FROM workspace_run_change_files f
               WHERE f.session_id = m.session_id AND f.old_path = m.path AND f.change_id = @change
                 AND IFNULL(f.old_path_base64, '') = m.path_base64))`,
  );

  function list(sessionId: string): ViewedResponse {
    return { viewed: listMarks.all(sessionId).map(toMark), rows: listRows.all(sessionId) };
  }

  const mark = db.transaction((sessionId: string, changeId: string, fileId: string, at: number): MarkOutcome => {
    const t = target.get(sessionId, changeId, fileId);
    if (!t) return 'no_such_file';
    const known = markOf.get(sessionId, t.path, t.path_base64);
    // A mark made on a later change already covers this row: a stale client must not move it back.
    if (known && known.change_seq >= t.change_seq) return 'unchanged';
    upsert.run(sessionId, t.path, t.path_base64, changeId, t.change_seq, fileId, at);
    return 'changed';
  });

  const unmark = db.transaction((sessionId: string, changeId: string, fileId: string): MarkOutcome => {
    const t = target.get(sessionId, changeId, fileId);
    if (!t) return 'no_such_file';
    const known = markOf.get(sessionId, t.path, t.path_base64);
    // Only a mark that covers the row: a mark made on an earlier change does not reach a later row.
    if (!known || known.change_seq < t.change_seq) return 'unchanged';
    remove.run(sessionId, t.path, t.path_base64);
    return 'changed';
  });

  return {
    /** The marks of a session and the rows they cover (empty for an unknown session). */
    list,
    /** Marks the path of file row `fileId` viewed as of its change. */
    mark,
    /** Removes the mark covering file row `fileId` (the whole path's mark). */
    unmark,
    /**
     * Removes the marks of every path the stored change `changeId` touches (its paths and its
     * renames' old paths). Call it in the transaction that stores the change. Returns how many went.
     */
    resetByChange(sessionId: string, changeId: string): number {
      if (anyMark.get(sessionId) === undefined) return 0;
      return reset.run({ session: sessionId, change: changeId }).changes;
    },
  };
}

export type ViewedStore = ReturnType<typeof createViewedStore>;
