import type { Db } from './database.ts';

/** The rows of a session a write touched, so readers can keep the parts of an answer it left alone. */
export type WritePart = 'session' | 'messages' | 'runs' | 'tool_calls' | 'changes';

/**
 * Tells readers whether a session's rows may have changed since they last looked, so they can keep
 * serialized answers. Own writes bump a per-session counter (or the global one for writes spanning
 * sessions), and the counter of the part they wrote when they name one; SQLite's `data_version`
 * covers commits by other connections (an offline `rundiff run`).
 */
export interface WriteClock {
  /** Called by every writer: the session it wrote (null: a write across sessions) and what it wrote (none: anything). */
  bump(sessionId: string | null, part?: WritePart): void;
  /** Changes whenever the session's rows may have changed. */
  version(sessionId: string): string;
  /** Changes whenever the session's rows of `part` may have changed (a write naming no part counts for every part). */
  partVersion(sessionId: string, part: WritePart): string;
}

interface SessionCounters {
  all: number;
  /** Writes that named no part. */
  unnamed: number;
  parts: Map<WritePart, number>;
}

export function createWriteClock(db: Db): WriteClock {
  let global = 0;
  const perSession = new Map<string, SessionCounters>();
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
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
    version(sessionId) {
      return `${global}:${perSession.get(sessionId)?.all ?? 0}:${String(dataVersion.get())}`;
    },
    partVersion(sessionId, part) {
      const c = perSession.get(sessionId);
      return `${global}:${c?.unnamed ?? 0}:${c?.parts.get(part) ?? 0}:${String(dataVersion.get())}`;
    },
  };
}
