import type { Message, MessageRole } from '../../shared/index.ts';
import type { Db } from './database.ts';
import type { WriteClock } from './write-clock.ts';

const COLUMNS = 'id, session_id, role, content, run_id, tool_call_id, created_at';

export function createMessageStore(db: Db, clock: WriteClock) {
  const getStmt = db.prepare<[string, string], Message>(
    `SELECT ${COLUMNS} FROM messages WHERE session_id = ? AND id = ?`,
  );
  const insertStmt = db.prepare<Message>(
    `INSERT INTO messages (${COLUMNS}) VALUES (@id, @session_id, @role, @content, @run_id, @tool_call_id, @created_at)`,
  );
  const updateStmt = db.prepare<Message>(
    `UPDATE messages SET role = @role, content = @content, run_id = @run_id, tool_call_id = @tool_call_id,
       created_at = @created_at WHERE session_id = @session_id AND id = @id`,
  );
  const pageStmt = db.prepare<[string, number, number], Message & { seq: number }>(
    `SELECT seq, ${COLUMNS} FROM messages WHERE session_id = ? AND created_at < ?
     ORDER BY created_at DESC, seq DESC LIMIT ?`,
  );
  const tiesStmt = db.prepare<[string, number, number], Message & { seq: number }>(
    `SELECT seq, ${COLUMNS} FROM messages WHERE session_id = ? AND created_at = ? AND seq < ? ORDER BY seq DESC`,
  );

  const strip = ({ seq: _seq, ...m }: Message & { seq: number }): Message => m;

  return {
    get(sessionId: string, id: string): Message | null {
      return getStmt.get(sessionId, id) ?? null;
    },
    insert(message: Message): void {
      clock.bump(message.session_id, 'messages');
      insertStmt.run(message);
    },
    update(message: Message): void {
      clock.bump(message.session_id, 'messages');
      updateStmt.run(message);
    },
    /**
     * The newest `limit` messages created before `before` (all when null), returned oldest first.
     * Messages sharing the boundary `created_at` all come along so that paging on the oldest
     * returned `created_at` never skips one.
     */
    page(sessionId: string, limit: number, before: number | null): Message[] {
      const rows = pageStmt.all(sessionId, before ?? Number.MAX_SAFE_INTEGER, limit);
      const last = rows[rows.length - 1];
      if (last && rows.length === limit) rows.push(...tiesStmt.all(sessionId, last.created_at, last.seq));
      return rows.reverse().map(strip);
    },
  };
}

export type MessageStore = ReturnType<typeof createMessageStore>;
export type { MessageRole };
