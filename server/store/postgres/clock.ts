import { versionRows, type WritePart } from '../sql/clock.ts';

export type { WritePart };
import type { Queryable } from './exec.ts';

/**
 * Moves the version of `sessionId` (null: every session), and of the part written (none named: every
 * part), inside the caller's transaction. Once per session, part and transaction is enough: the
 * versions move when the transaction commits.
 */
export async function bump(q: Queryable, sessionId: string | null, part?: WritePart): Promise<void> {
  const rows = versionRows(sessionId, part);
  const key = rows.join('\n');
  if (q.bumped?.has(key)) return;
  await q.query(
    `INSERT INTO session_versions (session_id, version) SELECT unnest($1::text[]), 1
     ON CONFLICT (session_id) DO UPDATE SET version = session_versions.version + 1`,
    [rows],
  );
  q.bumped?.add(key);
}
