import type { StoreClock } from '../types.ts';
import type { WritePart } from '../write-clock.ts';

export type { WritePart };
import type { Queryable } from './exec.ts';

/** '' is the global row: a write across sessions moves every session's version. */
const GLOBAL = '';
// A session's row is its id; its parts' rows add this (a control character, which ids never hold).
const SEP = '\u0001';
const UNNAMED = 'unnamed';

/**
 * Moves the version of `sessionId` (null: every session), and of the part written (none named: every
 * part), inside the caller's transaction. Once per session, part and transaction is enough: the
 * versions move when the transaction commits.
 */
export async function bump(q: Queryable, sessionId: string | null, part?: WritePart): Promise<void> {
  const rows = sessionId === null ? [GLOBAL] : [sessionId, `${sessionId}${SEP}${part ?? UNNAMED}`];
  const key = rows.join('\n');
  if (q.bumped?.has(key)) return;
  await q.query(
    `INSERT INTO session_versions (session_id, version) SELECT unnest($1::text[]), 1
     ON CONFLICT (session_id) DO UPDATE SET version = session_versions.version + 1`,
    [rows],
  );
  q.bumped?.add(key);
}

/**
 * The write clock from the database: every writer of any replica bumps `session_versions` in the
 * transaction of its write, so a version read here moves exactly when a write to the session commits.
 */
export function createPgClock(q: Queryable): StoreClock {
  const read = async (keys: string[]) => {
    const { rows } = await q.query<{ session_id: string; version: number }>(
      'SELECT session_id, version FROM session_versions WHERE session_id = ANY($1)',
      [keys],
    );
    const found = new Map(rows.map((r) => [r.session_id, r.version]));
    return keys.map((k) => found.get(k) ?? 0).join(':');
  };
  return {
    version: (sessionId) => read([GLOBAL, sessionId]),
    partVersion: (sessionId, part) => read([GLOBAL, `${sessionId}${SEP}${UNNAMED}`, `${sessionId}${SEP}${part}`]),
    bump: (sessionId, part) => bump(q, sessionId, part),
  };
}
