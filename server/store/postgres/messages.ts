import type { Message } from '../../../shared/index.ts';
import type { MessagesApi } from '../types.ts';
import { bump } from './clock.ts';
import type { Exec } from './exec.ts';

const COLUMNS = 'id, session_id, role, content, run_id, tool_call_id, created_at';
const values = (m: Message) => [m.id, m.session_id, m.role, m.content, m.run_id, m.tool_call_id, m.created_at];

export function createPgMessages(x: Exec): MessagesApi {
  return {
    async get(sessionId, id) {
      const { rows } = await x.q.query<Message>(`SELECT ${COLUMNS} FROM messages WHERE session_id = $1 AND id = $2`, [
        sessionId,
        id,
      ]);
      return rows[0] ?? null;
    },
    insert: (m) =>
      x.atomic(async (q) => {
        await bump(q, m.session_id);
        await q.query(`INSERT INTO messages (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`, values(m));
      }),
    update: (m) =>
      x.atomic(async (q) => {
        await bump(q, m.session_id);
        await q.query(
          `UPDATE messages SET role = $3, content = $4, run_id = $5, tool_call_id = $6, created_at = $7
           WHERE id = $1 AND session_id = $2`,
          values(m),
        );
      }),
    page: (sessionId, limit, before) =>
      x.read(async (q) => {
        const { rows } = await q.query<Message & { seq: number }>(
          `SELECT seq, ${COLUMNS} FROM messages WHERE session_id = $1 AND created_at < $2
         ORDER BY created_at DESC, seq DESC LIMIT $3`,
          [sessionId, before ?? Number.MAX_SAFE_INTEGER, limit],
        );
        const last = rows[rows.length - 1];
        if (last && rows.length === limit) {
          const ties = await q.query<Message & { seq: number }>(
            `SELECT seq, ${COLUMNS} FROM messages WHERE session_id = $1 AND created_at = $2 AND seq < $3 ORDER BY seq DESC`,
            [sessionId, last.created_at, last.seq],
          );
          rows.push(...ties.rows);
        }
        return rows.reverse().map(({ seq: _seq, ...m }) => m);
      }),
  };
}
