import { randomUUID } from 'node:crypto';
import type { GitToolName, ToolCallRecord } from '../../shared/index.ts';
import type { Db } from '../store/index.ts';

/** One finished tool call, as the transports report it (the id is assigned here). */
export type NewToolCallRecord = Omit<ToolCallRecord, 'id' | 'arguments' | 'commit'> &
  Partial<Pick<ToolCallRecord, 'arguments' | 'commit'>>;

export interface CallLogOptions {
  /** Rows kept (oldest removed first). Default 10,000. */
  maxRows?: number;
}

/** `GET /api/tools/calls?limit=`: default and maximum page size. */
export const CALLS_PAGE = { default: 50, max: 200 } as const;

const DEFAULT_MAX_ROWS = 10_000;
/** Pruning runs once per this many inserts (a DELETE per call would be wasted work). */
const PRUNE_EVERY = 100;

interface Row {
  id: string;
  tool: GitToolName;
  repository: string | null;
  ok: number;
  error_code: string | null;
  duration_ms: number;
  created_at: number;
  arguments: string | null;
  commit_hash: string | null;
  commit_summary: string | null;
}

/**
 * The tool-call log in SQLite (`tool_call_log`, migration 0002). Bounded: the log is global, not
 * per session, so session retention never trims it; the newest `maxRows` are kept instead.
 */
export function createCallLog(db: Db, opts: CallLogOptions = {}) {
  const maxRows = opts.maxRows ?? DEFAULT_MAX_ROWS;
  const insert = db.prepare(
    `INSERT INTO tool_call_log (id, tool, repository, ok, error_code, duration_ms, created_at, arguments,
       commit_hash, commit_summary)
     VALUES (@id, @tool, @repository, @ok, @error_code, @duration_ms, @created_at, @arguments, @commit_hash,
       @commit_summary)`,
  );
  const page = db.prepare<[number], Row>(
    `SELECT id, tool, repository, ok, error_code, duration_ms, created_at, arguments, commit_hash, commit_summary
     FROM tool_call_log
     ORDER BY created_at DESC, seq DESC LIMIT ?`,
  );
  const prune = db.prepare<[number]>(
    `DELETE FROM tool_call_log WHERE seq <= (SELECT seq FROM tool_call_log ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
  );
  let inserts = 0;

  return {
    record(call: NewToolCallRecord): ToolCallRecord {
      const row: ToolCallRecord = { id: randomUUID(), arguments: null, commit: null, ...call };
      const { commit, ...rest } = row;
      insert.run({
        ...rest,
        ok: row.ok ? 1 : 0,
        commit_hash: commit?.hash ?? null,
        commit_summary: commit?.summary ?? null,
      });
      inserts += 1;
      if (inserts % PRUNE_EVERY === 0 || maxRows < PRUNE_EVERY) prune.run(maxRows);
      return row;
    },
    /** Newest first. */
    list(limit: number): ToolCallRecord[] {
      return page.all(limit).map(({ commit_hash, commit_summary, ...r }) => ({
        ...r,
        ok: r.ok === 1,
        commit: commit_hash !== null && commit_summary !== null ? { hash: commit_hash, summary: commit_summary } : null,
      }));
    },
  };
}

export type CallLog = ReturnType<typeof createCallLog>;
