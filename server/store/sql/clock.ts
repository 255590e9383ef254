import type { Sql } from './types.ts';

/** The rows of a session a write touched, so readers can keep the parts of an answer it left alone. */
export type WritePart = 'session' | 'messages' | 'runs' | 'tool_calls' | 'changes';

/**
 * Tells readers whether a session's rows may have changed since they last looked, so they can keep
 * serialized answers. Every writer bumps inside its step, naming the session (null: a write across
 * sessions) and the part it wrote (none: anything). Each call takes the executor of the current
 * step, so the version moves with that step's commit.
 */
export interface WriteClock {
  /**
   * Notes the write of the step `q` runs. Synchronous for the caller (a statement it needs runs in
   * order before the step's next one, and the step waits for it), so a write's first statement still
   * runs within the call.
   */
  bump(q: Sql, sessionId: string | null, part?: WritePart): void;
  /** Changes whenever the session's rows may have changed. Opaque; compare for equality only. */
  version(q: Sql, sessionId: string): Promise<string>;
  /** Changes whenever the session's rows of `part` may have changed (a write naming no part counts for every part). */
  partVersion(q: Sql, sessionId: string, part: WritePart): Promise<string>;
}

interface SessionCounters {
  all: number;
  /** Writes that named no part. */
  unnamed: number;
  parts: Map<WritePart, number>;
}

/** Per-process counters of one SQLite connection's writes. */
export interface SqliteCounters {
  bump(sessionId: string | null, part?: WritePart): void;
  /** The counters' part of `version`, before SQLite's `data_version`. */
  version(sessionId: string): string;
  partVersion(sessionId: string, part: WritePart): string;
}

export function createCounters(): SqliteCounters {
  let global = 0;
  const perSession = new Map<string, SessionCounters>();
  return {
    bump(sessionId, part) {
      if (sessionId === null) {
        global++;
        return;
      }
      let c = perSession.get(sessionId);
      if (!c) perSession.set(sessionId, (c = { all: 0, unnamed: 0, parts: new Map() }));
      c.all++;
      if (part === undefined) c.unnamed++;
      else c.parts.set(part, (c.parts.get(part) ?? 0) + 1);
    },
    version: (sessionId) => `${global}:${perSession.get(sessionId)?.all ?? 0}`,
    partVersion(sessionId, part) {
      const c = perSession.get(sessionId);
      return `${global}:${c?.unnamed ?? 0}:${c?.parts.get(part) ?? 0}`;
    },
  };
}

const DATA_VERSION = 'PRAGMA data_version';

/**
 * SQLite's clock: own writes bump per-process counters (per session, per part, or the global one),
 * and SQLite's `data_version` covers commits by other connections (an offline `rundiff run`).
 */
export function createSqliteClock(counters: SqliteCounters = createCounters()): WriteClock {
  const dataVersion = async (q: Sql) => String((await q.get<{ data_version: number }>(DATA_VERSION))?.data_version);
  return {
    bump: (_q, sessionId, part) => counters.bump(sessionId, part),
    version: async (q, sessionId) => {
      const own = counters.version(sessionId);
      return `${own}:${await dataVersion(q)}`;
    },
    partVersion: async (q, sessionId, part) => {
      const own = counters.partVersion(sessionId, part);
      return `${own}:${await dataVersion(q)}`;
    },
  };
}

/** '' is the global row: a write across sessions moves every session's version. */
const GLOBAL = '';
// A session's row is its id; its parts' rows add this (a control character, which ids never hold).
const SEP = '\u0001';
const UNNAMED = 'unnamed';

/** The `session_versions` rows a write moves. */
export const versionRows = (sessionId: string | null, part?: WritePart): string[] =>
  sessionId === null ? [GLOBAL] : [sessionId, `${sessionId}${SEP}${part ?? UNNAMED}`];

/**
 * PostgreSQL's clock, from the database: every writer of any replica bumps `session_versions` in the
 * transaction of its write (once per session, part and transaction), so a version read here moves
 * exactly when a write to the session commits.
 */
export function createPostgresClock(): WriteClock {
  const read = async (q: Sql, keys: string[]) => {
    const rows = await q.all<{ session_id: string; version: number }>(
      `SELECT session_id, version FROM session_versions WHERE session_id IN (${keys.map(() => '?').join(', ')})`,
      keys,
    );
    const found = new Map(rows.map((r) => [r.session_id, r.version]));
    return keys.map((k) => found.get(k) ?? 0).join(':');
  };
  return {
    bump(q, sessionId, part) {
      if (q.step === null) throw new Error('the write clock moves inside a step (atomic or a transaction)');
      const rows = versionRows(sessionId, part);
      const key = rows.join('\n');
      if (q.step.memo.has(key)) return;
      q.step.memo.add(key);
      q.step.defer(
        q.run(
          `INSERT INTO session_versions (session_id, version) VALUES ${rows.map(() => '(?, 1)').join(', ')}
           ON CONFLICT (session_id) DO UPDATE SET version = session_versions.version + 1`,
          rows,
        ),
      );
    },
    version: (q, sessionId) => read(q, [GLOBAL, sessionId]),
    partVersion: (q, sessionId, part) => read(q, [GLOBAL, `${sessionId}${SEP}${UNNAMED}`, `${sessionId}${SEP}${part}`]),
  };
}
