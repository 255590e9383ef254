import type { GitToolName, ToolCallRecord } from '../../shared/index.ts';
import type { Db } from './database.ts';

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

/** The git tools' call log (`tool_call_log`, migration 0002): rows only; its bound is the caller's policy. */
export function createCallLogStore(db: Db) {
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
  return {
    insert(record: ToolCallRecord): void {
      const { commit, ...rest } = record;
      insert.run({
        ...rest,
        ok: record.ok ? 1 : 0,
        commit_hash: commit?.hash ?? null,
        commit_summary: commit?.summary ?? null,
      });
    },
    /** Keeps the newest `keep` rows. */
    prune(keep: number): void {
      prune.run(keep);
    },
    /** Newest first. */
    page(limit: number): ToolCallRecord[] {
      return page.all(limit).map(({ commit_hash, commit_summary, ...r }) => ({
        ...r,
        ok: r.ok === 1,
        commit: commit_hash !== null && commit_summary !== null ? { hash: commit_hash, summary: commit_summary } : null,
      }));
    },
  };
}

export type CallLogStore = ReturnType<typeof createCallLogStore>;
