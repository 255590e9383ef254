import type { Message, MessageRole } from '../../shared/index.ts';
import type { WriteClock } from './sql/clock.ts';
import type { Param, Sql } from './sql/types.ts';
import type { MessagesApi } from './types.ts';

const COLUMNS = 'id, session_id, role, content, run_id, tool_call_id, created_at';
const values = (m: Message): Param[] => [m.id, m.session_id, m.role, m.content, m.run_id, m.tool_call_id, m.created_at];

type PagedRow = Message & { seq: number };
const strip = ({ seq: _seq, ...m }: PagedRow): Message => m;

export function createMessageStore(sql: Sql, clock: WriteClock): MessagesApi {
  return {
    async get(sessionId, id) {
      return (
        (await sql.get<Message>(`SELECT ${COLUMNS} FROM messages WHERE session_id = ? AND id = ?`, [sessionId, id])) ??
        null
      );
    },
    insert: (m) =>
      sql.atomic(async (q) => {
        clock.bump(q, m.session_id, 'messages');
        await q.run(`INSERT INTO messages (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`, values(m));
      }),
    update: (m) =>
      sql.atomic(async (q) => {
        clock.bump(q, m.session_id, 'messages');
        await q.run(
          `UPDATE messages SET role = ?, content = ?, run_id = ?, tool_call_id = ?, created_at = ?
           WHERE session_id = ? AND id = ?`,
          [m.role, m.content, m.run_id, m.tool_call_id, m.created_at, m.session_id, m.id],
        );
      }),
    /**
     * The newest `limit` messages created before `before` (all when null), returned oldest first.
     * Messages sharing the boundary `created_at` all come along so that paging on the oldest
     * returned `created_at` never skips one.
     */
    page: (sessionId, limit, before) =>
      sql.read(async (q) => {
        const rows = await q.all<PagedRow>(
          `SELECT seq, ${COLUMNS} FROM messages WHERE session_id = ? AND created_at < ?
           ORDER BY created_at DESC, seq DESC LIMIT ?`,
          [sessionId, before ?? Number.MAX_SAFE_INTEGER, limit],
        );
        const last = rows[rows.length - 1];
        if (last && rows.length === limit)
          rows.push(
            ...(await q.all<PagedRow>(
              `SELECT seq, ${COLUMNS} FROM messages WHERE session_id = ? AND created_at = ? AND seq < ? ORDER BY seq DESC`,
              [sessionId, last.created_at, last.seq],
            )),
          );
        return rows.reverse().map(strip);
      }),
  };
}

export type { MessageRole };
