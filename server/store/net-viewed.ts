import type { Sql } from './sql/types.ts';
import type { NetViewedApi } from './types.ts';

/**
 * Viewed marks of the Session changes view (migration 0015): one per session, range start and path,
 * holding the net patch's content hash it was made on. Whether a mark still counts is decided above
 * the store, against the net change computed now (a hash that differs is a stale mark).
 */

/** A stored mark; `path_base64` is '' for a name that is valid UTF-8. */
export interface StoredNetMark {
  path: string;
  path_base64: string;
  net_hash: string;
  to_change_id: string;
  viewed_at: number;
}

const COLUMNS = 'path, path_base64, net_hash, to_change_id, viewed_at';
const UPSERT = `INSERT INTO net_viewed_marks (session_id, from_change_id, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (session_id, from_change_id, path, path_base64) DO UPDATE SET
       net_hash = excluded.net_hash, to_change_id = excluded.to_change_id, viewed_at = excluded.viewed_at`;

export function createNetViewedStore(sql: Sql): NetViewedApi {
  return {
    /** The marks of a session's ranges from `fromChangeId`, oldest first. */
    list: (sessionId, fromChangeId) =>
      sql.all<StoredNetMark>(
        `SELECT ${COLUMNS} FROM net_viewed_marks WHERE session_id = ? AND from_change_id = ?
         ORDER BY viewed_at, path, path_base64`,
        [sessionId, fromChangeId],
      ),
    /** Marks a path viewed as of the net patch `net_hash` (replacing the path's mark for the same start). */
    mark: async (sessionId, fromChangeId, m) =>
      void (await sql.run(UPSERT, [
        sessionId,
        fromChangeId,
        m.path,
        m.path_base64,
        m.net_hash,
        m.to_change_id,
        m.viewed_at,
      ])),
    /** Removes the path's mark for ranges from `fromChangeId`; false when there was none. */
    unmark: async (sessionId, fromChangeId, path, pathBase64) =>
      (await sql.run(
        'DELETE FROM net_viewed_marks WHERE session_id = ? AND from_change_id = ? AND path = ? AND path_base64 = ?',
        [sessionId, fromChangeId, path, pathBase64],
      )) > 0,
  };
}
