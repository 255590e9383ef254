import type { StoreClock } from '../types.ts';
import type { Queryable } from './exec.ts';

/** '' is the global row: a write across sessions moves every session's version. */
const GLOBAL = '';

/** Moves the version of `sessionId` (null: every session) inside the caller's transaction. */
export async function bump(q: Queryable, sessionId: string | null): Promise<void> {
  await q.query(
    `INSERT INTO session_versions (session_id, version) VALUES ($1, 1)
     ON CONFLICT (session_id) DO UPDATE SET version = session_versions.version + 1`,
    [sessionId ?? GLOBAL],
  );
}

/**
 * The write clock from the database: every writer of any replica bumps `session_versions` in the
 * transaction of its write, so a version read here moves exactly when a write to the session commits.
 */
export function createPgClock(q: Queryable): StoreClock {
  const clock: StoreClock = {
    async version(sessionId) {
      const { rows } = await q.query<{ g: number; s: number }>(
        `SELECT COALESCE((SELECT version FROM session_versions WHERE session_id = $1), 0) AS g,
                COALESCE((SELECT version FROM session_versions WHERE session_id = $2), 0) AS s`,
        [GLOBAL, sessionId],
      );
      return `${rows[0]!.g}:${rows[0]!.s}`;
    },
    // One version per session here: a write to any part moves every part (never a stale answer).
    partVersion: (sessionId) => clock.version(sessionId),
    bump: (sessionId) => bump(q, sessionId),
  };
  return clock;
}
