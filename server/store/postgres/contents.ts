import { inflateSync } from 'node:zlib';
import {
  CONTENT_ROW_COLUMNS,
  SIDES,
  toStored,
  type ContentRow,
  type ContentSideInput,
  type PendingContent,
  type PreparedContent,
  type RawContent,
} from '../contents.ts';
import type { ContentsApi } from '../types.ts';
import { valuesRows, type Exec, type Queryable } from './exec.ts';

// Rows per INSERT: few round trips, far below the 65,535 parameters a statement takes.
const ROWS_PER_INSERT = 500;

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
        const pending: PendingContent<PreparedContent | RawContent>[] = [];
        const reasonOf = (s: ContentSideInput) => (s.mode === null ? null : 'reason' in s ? s.reason : 'pending');
        const values: unknown[] = [];
        const ids = await fileIds(q, sessionId, changeId);
        for (const [i, fileId] of ids.entries()) {
          const f = files[i];
          if (!f) continue;
          values.push(
            fileId,
            sessionId,
            changeId,
            seq,
            f.before.mode,
            reasonOf(f.before),
            f.after.mode,
            reasonOf(f.after),
          );
          for (const side of SIDES) {
            const c = f[side];
            if ('sha256' in c || 'raw' in c) pending.push({ seq, fileId, side, content: c });
          }
        }
        // Many rows per statement: a change of thousands of files is a few round trips.
        for (let start = 0; start < values.length; start += ROWS_PER_INSERT * 8) {
          const chunk = values.slice(start, start + ROWS_PER_INSERT * 8);
          await q.query(
            `INSERT INTO change_file_contents (file_id, session_id, change_id, change_seq, before_mode, before_reason,
               after_mode, after_reason) VALUES ${valuesRows(chunk.length / 8, 8)}`,
            chunk,
          );
        }
        return pending;
      }),
    fill: (items, maxBytes, now) =>
      x.atomic(async (q) => {
        if (items.length === 0) return;
        // One filler at a time across every replica, so two cannot both spend the same room.
        const locked = await q.query<{ bytes: number }>('SELECT bytes FROM content_usage WHERE id = 1 FOR UPDATE');
        let used = locked.rows[0]!.bytes;
        const reasons = await q.query<{ file_id: string; before_reason: string | null; after_reason: string | null }>(
          'SELECT file_id, before_reason, after_reason FROM change_file_contents WHERE file_id = ANY($1)',
          [[...new Set(items.map((i) => i.fileId))]],
        );
        const pendingSide = new Set<string>();
        for (const r of reasons.rows) {
          if (r.before_reason === 'pending') pendingSide.add(`${r.file_id}:before`);
          if (r.after_reason === 'pending') pendingSide.add(`${r.file_id}:after`);
        }
        // A kept content is locked while it gains its references (a release elsewhere skips it).
        const kept = await q.query<{ sha256: string }>(
          'SELECT sha256 FROM content_blobs WHERE sha256 = ANY($1) FOR SHARE',
          [[...new Set(items.map((i) => i.content.sha256))]],
        );
        const present = new Set(kept.rows.map((r) => r.sha256));
        // Written in batches; a batch is flushed before an eviction, so every content gets its
        // reference before anything is released (an eviction could otherwise remove it).
        let blobs: PendingContent['content'][] = [];
        let sides: { fileId: string; side: 'before' | 'after'; sha256: string | null; reason: string | null }[] = [];
        const flush = async () => {
          for (let start = 0; start < blobs.length; start += ROWS_PER_INSERT) {
            const chunk = blobs.slice(start, start + ROWS_PER_INSERT);
            await q.query(
              `INSERT INTO content_blobs (sha256, size, stored_bytes, codec, data, created_at)
               VALUES ${valuesRows(chunk.length, 6)} ON CONFLICT (sha256) DO NOTHING`,
              chunk.flatMap((c) => [c.sha256, c.size, c.data.length, c.codec, c.data, now]),
            );
          }
          for (const side of SIDES) {
            const mine = sides.filter((s) => s.side === side);
            if (mine.length === 0) continue;
            await q.query(
              `UPDATE change_file_contents c SET ${side}_sha256 = v.sha256, ${side}_reason = v.reason
               FROM unnest($1::text[], $2::text[], $3::text[]) AS v(file_id, sha256, reason)
               WHERE c.file_id = v.file_id`,
              [mine.map((s) => s.fileId), mine.map((s) => s.sha256), mine.map((s) => s.reason)],
            );
          }
          blobs = [];
          sides = [];
        };
        for (const { seq, fileId, side, content: c } of items) {
          if (!pendingSide.delete(`${fileId}:${side}`)) continue;
          if (!present.has(c.sha256)) {
            if (used + c.data.length > maxBytes) {
              await flush();
              const room = await makeRoom(q, c.data.length, maxBytes, seq);
              used = (await q.query<{ bytes: number }>('SELECT bytes FROM content_usage WHERE id = 1')).rows[0]!.bytes;
              if (!room) {
                sides.push({ fileId, side, sha256: null, reason: 'budget' });
                continue;
              }
            }
            blobs.push(c);
            present.add(c.sha256);
            used += c.data.length;
          }
          sides.push({ fileId, side, sha256: c.sha256, reason: null });
        }
        await flush();
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
        `SELECT ${CONTENT_ROW_COLUMNS} FROM change_file_contents WHERE session_id = $1 AND change_id = $2 AND file_id = $3`,
        [sessionId, changeId, fileId],
      );
      return rows[0] ? toStored(rows[0]) : null;
    },
    async forChange(sessionId, changeId) {
      const { rows } = await x.q.query<ContentRow>(
        `SELECT ${CONTENT_ROW_COLUMNS} FROM change_file_contents WHERE session_id = $1 AND change_id = $2`,
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
