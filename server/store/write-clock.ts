import type { Db } from './database.ts';

/**
 * Tells readers whether a session's rows may have changed since they last looked, so they can keep
 * serialized answers. Own writes bump a per-session counter (or the global one for writes spanning
 * sessions); SQLite's `data_version` covers commits by other connections (an offline `rundiff run`).
 */
export interface WriteClock {
  /** Called by every writer: the session it wrote, or null for a write across sessions. */
  bump(sessionId: string | null): void;
  /** Changes whenever the session's rows may have changed. */
  version(sessionId: string): string;
}

export function createWriteClock(db: Db): WriteClock {
  let global = 0;
  const perSession = new Map<string, number>();
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  return {
    bump(sessionId) {
      if (sessionId === null) global++;
      else perSession.set(sessionId, (perSession.get(sessionId) ?? 0) + 1);
    },
    version(sessionId) {
      return `${global}:${perSession.get(sessionId) ?? 0}:${String(dataVersion.get())}`;
    },
  };
}
