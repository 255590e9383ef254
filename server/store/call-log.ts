import type { GitToolName, ToolCallRecord } from '../../shared/index.ts';
import type { Sql } from './sql/types.ts';
import type { CallLogApi } from './types.ts';

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
export function createCallLogStore(sql: Sql): CallLogApi {
  return {
    async insert(r) {
      await sql.run(
        `INSERT INTO tool_call_log (id, tool, repository, ok, error_code, duration_ms, created_at, arguments,
           commit_hash, commit_summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          r.id,
          r.tool,
          r.repository,
          r.ok ? 1 : 0,
          r.error_code,
          r.duration_ms,
          r.created_at,
          r.arguments,
          r.commit?.hash ?? null,
          r.commit?.summary ?? null,
        ],
      );
    },
    /** Keeps the newest `keep` rows. */
    async prune(keep) {
      await sql.run(
        'DELETE FROM tool_call_log WHERE seq <= (SELECT seq FROM tool_call_log ORDER BY seq DESC LIMIT 1 OFFSET ?)',
        [keep],
      );
    },
    /** Newest first. */
    async page(limit): Promise<ToolCallRecord[]> {
      const rows = await sql.all<Row>(
        `SELECT id, tool, repository, ok, error_code, duration_ms, created_at, arguments, commit_hash, commit_summary
         FROM tool_call_log ORDER BY created_at DESC, seq DESC LIMIT ?`,
        [limit],
      );
      return rows.map(({ commit_hash, commit_summary, ...r }) => ({
        ...r,
        ok: r.ok === 1,
        commit: commit_hash !== null && commit_summary !== null ? { hash: commit_hash, summary: commit_summary } : null,
      }));
    },
  };
}
