import type { Db } from './database.ts';
import { createCounters, type SqliteCounters, type WritePart } from './sql/clock.ts';

export type { WritePart } from './sql/clock.ts';

/**
 * The SQLite write clock as the synchronous modules not yet written over the executor see it: the
 * same per-process counters as `sql/clock.ts`'s SQLite clock (`counters`), plus `data_version`.
 */
export interface SyncWriteClock {
  bump(sessionId: string | null, part?: WritePart): void;
  version(sessionId: string): string;
  partVersion(sessionId: string, part: WritePart): string;
}
/** The name the synchronous modules import. */
export type WriteClock = SyncWriteClock;

export function createWriteClock(db: Db, counters: SqliteCounters = createCounters()): SyncWriteClock {
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  return {
    bump: (sessionId, part) => counters.bump(sessionId, part),
    version: (sessionId) => `${counters.version(sessionId)}:${String(dataVersion.get())}`,
    partVersion: (sessionId, part) => `${counters.partVersion(sessionId, part)}:${String(dataVersion.get())}`,
  };
}
