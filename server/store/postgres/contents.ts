import { inflateSync } from 'node:zlib';
import type { ContentUnavailableReason } from '../../../shared/index.ts';
import type { ContentSideInput, PendingContent, StoredContent } from '../contents.ts';
import type { ContentsApi } from '../types.ts';
import type { Exec, Queryable } from './exec.ts';

interface ContentRow {
  file_id: string;
  before_mode: string | null;
  before_sha256: string | null;
  before_reason: ContentUnavailableReason | null;
  after_mode: string | null;
  after_sha256: string | null;
  after_reason: ContentUnavailableReason | null;
}

const toStored = (r: ContentRow): StoredContent => ({
  fileId: r.file_id,
  before: { mode: r.before_mode, sha256: r.before_sha256, reason: r.before_reason },
  after: { mode: r.after_mode, sha256: r.after_sha256, reason: r.after_reason },
});

const SIDES = ['before', 'after'] as const;
const ROW_COLUMNS = 'file_id, before_mode, before_sha256, before_reason, after_mode, after_sha256, after_reason';

async function changeSeq(q: Queryable, sessionId: string, changeId: string): Promise<number | undefined> {
  const { rows } = await q.query<{ seq: number }>(
    'SELECT seq FROM workspace_run_changes WHERE session_id = $1 AND change_id = $2',
    [sessionId, changeId],
  );
  return rows[0]?.seq;
}

async function fileIds(q: Queryable, sessionId: string, changeId: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    'SELECT id FROM workspace_run_change_files WHERE session_id = $1 AND change_id = $2 ORDER BY ord',
    [sessionId, changeId],
  );
  return rows.map((r) => r.id);
}

/** The content store on PostgreSQL: the SQLite module's rules, the schema's triggers doing the accounting. */
export function createPgContents(x: Exec): ContentsApi {
  /** Makes room for `bytes` more by evicting whole older changes, oldest first; false when it cannot. */
  async function makeRoom(q: Queryable, bytes: number, maxBytes: number, seq: number): Promise<boolean> {
    for (;;) {
      const u = await q.query<{ bytes: number }>('SELECT bytes FROM content_usage WHERE id = 1');
      if (u.rows[0]!.bytes + bytes <= maxBytes) return true;
      const oldest = await q.query<{ change_seq: number }>(
        `SELECT change_seq FROM change_file_contents
         WHERE change_seq < $1 AND (before_sha256 IS NOT NULL OR after_sha256 IS NOT NULL)
         ORDER BY change_seq LIMIT 1`,
        [seq],
      );
      const s = oldest.rows[0]?.change_seq;
      if (s === undefined) return false;
      await q.query(
        `UPDATE change_file_contents SET before_sha256 = NULL, before_reason = 'evicted'
         WHERE change_seq = $1 AND before_sha256 IS NOT NULL`,
        [s],
      );
      await q.query(
        `UPDATE change_file_contents SET after_sha256 = NULL, after_reason = 'evicted'
         WHERE change_seq = $1 AND after_sha256 IS NOT NULL`,
        [s],
      );
    }
  }

  return {
    record: (sessionId, changeId, files) =>
      x.atomic(async (q) => {
        const seq = await changeSeq(q, sessionId, changeId);
        if (seq === undefined) return [];
        const pending: PendingContent[] = [];
        const ids = await fileIds(q, sessionId, changeId);
        const reasonOf = (s: ContentSideInput) => (s.mode === null ? null : 'reason' in s ? s.reason : 'pending');
        for (const [i, fileId] of ids.entries()) {
          const f = files[i];
          if (!f) continue;
          await q.query(
            `INSERT INTO change_file_contents (file_id, session_id, change_id, change_seq, before_mode, before_reason,
               after_mode, after_reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
            [fileId, sessionId, changeId, seq, f.before.mode, reasonOf(f.before), f.after.mode, reasonOf(f.after)],
          );
          for (const side of SIDES) {
            const c = f[side];
            if ('sha256' in c) pending.push({ seq, fileId, side, content: c });
          }
        }
        return pending;
      }),
    fill: (items, maxBytes, now) =>
      x.atomic(async (q) => {
        if (items.length === 0) return;
        // One filler at a time across every replica, so two cannot both spend the same room.
        await q.query('SELECT 1 FROM content_usage WHERE id = 1 FOR UPDATE');
        for (const { seq, fileId, side, content: c } of items) {
          const reason = await q.query<{ r: string | null }>(
            `SELECT ${side}_reason AS r FROM change_file_contents WHERE file_id = $1`,
            [fileId],
          );
          if (reason.rows[0]?.r !== 'pending') continue;
          // A kept content is locked while it gains this reference (a release elsewhere skips it).
          const known = await q.query('SELECT 1 FROM content_blobs WHERE sha256 = $1 FOR SHARE', [c.sha256]);
          if ((known.rowCount ?? 0) === 0) {
            if (!(await makeRoom(q, c.data.length, maxBytes, seq))) {
              await q.query(
                `UPDATE change_file_contents SET ${side}_sha256 = NULL, ${side}_reason = 'budget' WHERE file_id = $1`,
                [fileId],
              );
              continue;
            }
            await q.query(
              `INSERT INTO content_blobs (sha256, size, stored_bytes, codec, data, created_at)
               VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (sha256) DO NOTHING`,
              [c.sha256, c.size, c.data.length, c.codec, c.data, now],
            );
          }
          await q.query(
            `UPDATE change_file_contents SET ${side}_sha256 = $1, ${side}_reason = NULL WHERE file_id = $2`,
            [c.sha256, fileId],
          );
        }
      }),
    settlePending: (sessionId, changeId, reason) =>
      x.atomic(async (q) => {
        for (const side of SIDES)
          await q.query(
            `UPDATE change_file_contents SET ${side}_reason = $1
             WHERE session_id = $2 AND change_id = $3 AND ${side}_reason = 'pending'`,
            [reason, sessionId, changeId],
          );
      }),
    markUnavailable: (sessionId, changeId, files, reason) =>
      x.atomic(async (q) => {
        const seq = await changeSeq(q, sessionId, changeId);
        if (seq === undefined) return;
        for (const [i, fileId] of (await fileIds(q, sessionId, changeId)).entries()) {
          const f = files[i];
          if (!f) continue;
          await q.query(
            `INSERT INTO change_file_contents (file_id, session_id, change_id, change_seq, before_mode, before_reason,
               after_mode, after_reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (file_id) DO UPDATE SET session_id = excluded.session_id, change_id = excluded.change_id,
               change_seq = excluded.change_seq, before_mode = excluded.before_mode, before_sha256 = NULL,
               before_reason = excluded.before_reason, after_mode = excluded.after_mode, after_sha256 = NULL,
               after_reason = excluded.after_reason`,
            [
              fileId,
              sessionId,
              changeId,
              seq,
              f.before.mode,
              f.before.mode === null ? null : reason,
              f.after.mode,
              f.after.mode === null ? null : reason,
            ],
          );
        }
      }),
    async get(sessionId, changeId, fileId) {
      const { rows } = await x.q.query<ContentRow>(
        `SELECT ${ROW_COLUMNS} FROM change_file_contents WHERE session_id = $1 AND change_id = $2 AND file_id = $3`,
        [sessionId, changeId, fileId],
      );
      return rows[0] ? toStored(rows[0]) : null;
    },
    async forChange(sessionId, changeId) {
      const { rows } = await x.q.query<ContentRow>(
        `SELECT ${ROW_COLUMNS} FROM change_file_contents WHERE session_id = $1 AND change_id = $2`,
        [sessionId, changeId],
      );
      return new Map(rows.map((r) => [r.file_id, toStored(r)]));
    },
    async blob(sha256) {
      const { rows } = await x.q.query<{ codec: 'raw' | 'deflate'; data: Buffer }>(
        'SELECT codec, data FROM content_blobs WHERE sha256 = $1',
        [sha256],
      );
      const row = rows[0];
      if (!row) return null;
      return row.codec === 'deflate' ? inflateSync(row.data) : row.data;
    },
    async stats(maxBytes) {
      const { rows } = await x.q.query<{ bytes: number; blobs: number }>(
        'SELECT bytes, blobs FROM content_usage WHERE id = 1',
      );
      return { bytes_used: rows[0]!.bytes, max_bytes: maxBytes, blobs: rows[0]!.blobs };
    },
  };
}
