import { inflateSync } from 'node:zlib';
import type { ContentUnavailableReason } from '../../shared/index.ts';
import { chunks, inList, insertRows, rowsPerStatement, valuesList } from './batches.ts';
import type { Param, Sql } from './sql/types.ts';
import type { ContentsApi } from './types.ts';

/**
 * The content store: the before and after bytes of a change's files, content-addressed and
 * compressed, under a global budget. Contents are prepared (hashed, compressed) outside any
 * transaction, before the storing one or after it (their sides are then `pending` meanwhile); here
 * they are only written, referenced and evicted. A content no row references is
 * removed by the schema's triggers, so deletes elsewhere (a session, retention) free space too.
 */

/**
 * One side of a file about to be stored: absent, unavailable with a reason, a prepared content, or
 * raw bytes that are hashed and compressed after the storing transaction (recorded `pending`).
 */
export type ContentSideInput =
  { mode: null } | { mode: string; reason: ContentUnavailableReason } | PreparedContent | RawContent;

/** A content ready to store: the sha256 of its raw bytes, their size, and the data as kept. */
export interface PreparedContent {
  mode: string;
  sha256: string;
  size: number;
  codec: 'raw' | 'deflate';
  data: Buffer;
}

/** Bytes of a side still to be prepared (hashed, compressed) before they are written. */
export interface RawContent {
  mode: string;
  raw: Buffer;
}

/** A content waiting to be written for one side of a recorded file (prepared by then). */
export interface PendingContent<C extends PreparedContent | RawContent = PreparedContent> {
  seq: number;
  fileId: string;
  side: 'before' | 'after';
  content: C;
}

export interface FileContentInput {
  before: ContentSideInput;
  after: ContentSideInput;
}

/** A side as stored: `mode` null = the path did not exist on that side. */
export interface StoredSide {
  mode: string | null;
  sha256: string | null;
  reason: ContentUnavailableReason | null;
}

export interface StoredContent {
  fileId: string;
  before: StoredSide;
  after: StoredSide;
}

/** A file's recorded sides as stored, one row of `change_file_contents` (every engine reads this shape). */
export interface ContentRow {
  file_id: string;
  before_mode: string | null;
  before_sha256: string | null;
  before_reason: ContentUnavailableReason | null;
  after_mode: string | null;
  after_sha256: string | null;
  after_reason: ContentUnavailableReason | null;
}

export const toStored = (r: ContentRow): StoredContent => ({
  fileId: r.file_id,
  before: { mode: r.before_mode, sha256: r.before_sha256, reason: r.before_reason },
  after: { mode: r.after_mode, sha256: r.after_sha256, reason: r.after_reason },
});

export const SIDES = ['before', 'after'] as const;

/** A file's recorded sides: the columns of `change_file_contents` besides its keys. */
export const CONTENT_SIDE_COLUMNS = [
  'before_mode',
  'before_sha256',
  'before_reason',
  'after_mode',
  'after_sha256',
  'after_reason',
] as const;
/** The columns of a content row as `ContentRow` reads them. */
export const CONTENT_ROW_COLUMNS = ['file_id', ...CONTENT_SIDE_COLUMNS].join(', ');

const SQL = {
  changeSeq: 'SELECT seq FROM workspace_run_changes WHERE session_id = ? AND change_id = ?',
  fileIds: 'SELECT id FROM workspace_run_change_files WHERE session_id = ? AND change_id = ? ORDER BY ord',
  insertRows: `INSERT INTO change_file_contents (file_id, session_id, change_id, change_seq, before_mode, before_reason,
     after_mode, after_reason)`,
  // A file recorded again (its contents could not be written) keeps no content.
  markConflict: ` ON CONFLICT (file_id) DO UPDATE SET session_id = excluded.session_id,
     change_id = excluded.change_id, change_seq = excluded.change_seq, before_mode = excluded.before_mode,
     before_sha256 = NULL, before_reason = excluded.before_reason, after_mode = excluded.after_mode,
     after_sha256 = NULL, after_reason = excluded.after_reason`,
  insertBlobs: 'INSERT INTO content_blobs (sha256, size, stored_bytes, codec, data, created_at)',
  usage: 'SELECT bytes, blobs FROM content_usage WHERE id = 1',
  // Oldest first; rows already emptied by an earlier eviction are skipped.
  oldestHolding: `SELECT change_seq FROM change_file_contents
     WHERE change_seq < ? AND (before_sha256 IS NOT NULL OR after_sha256 IS NOT NULL)
     ORDER BY change_seq LIMIT 1`,
  row: `SELECT ${CONTENT_ROW_COLUMNS} FROM change_file_contents WHERE session_id = ? AND change_id = ? AND file_id = ?`,
  rows: `SELECT ${CONTENT_ROW_COLUMNS} FROM change_file_contents WHERE session_id = ? AND change_id = ?`,
  blob: 'SELECT codec, data FROM content_blobs WHERE sha256 = ?',
};

/** Per side, the statements naming its columns (a column name is not a parameter). */
const SIDE_SQL = {
  before: sideSql('before'),
  after: sideSql('after'),
};

function sideSql(side: 'before' | 'after') {
  return {
    evict: `UPDATE change_file_contents SET ${side}_sha256 = NULL, ${side}_reason = 'evicted'
       WHERE change_seq = ? AND ${side}_sha256 IS NOT NULL`,
    settle: `UPDATE change_file_contents SET ${side}_reason = ?
       WHERE session_id = ? AND change_id = ? AND ${side}_reason = 'pending'`,
    /** Sets the side of many file rows in one statement: `rows` rows of (file id, sha256, reason). */
    set: (rows: number) =>
      `UPDATE change_file_contents SET ${side}_sha256 = v.sha256, ${side}_reason = v.reason
       FROM (SELECT column1 AS file_id, column2 AS sha256, column3 AS reason FROM (VALUES ${valuesList(rows, 3)}) AS w) AS v
       WHERE change_file_contents.file_id = v.file_id`,
  };
}

/** Values per `IN (...)` list; rows per multi-row statement. */
const IN_CHUNK = 500;
const ROWS_PER_INSERT = rowsPerStatement(8);
// Contents per INSERT, and their data bytes at most (one statement holds them all).
const BLOBS_PER_INSERT = 200;
const BLOB_BYTES_PER_INSERT = 16 * 1024 * 1024;

const reasonOf = (s: ContentSideInput) => (s.mode === null ? null : 'reason' in s ? s.reason : 'pending');

async function changeSeq(q: Sql, sessionId: string, changeId: string): Promise<number | undefined> {
  return (await q.get<{ seq: number }>(SQL.changeSeq, [sessionId, changeId]))?.seq;
}

async function fileIds(q: Sql, sessionId: string, changeId: string): Promise<string[]> {
  return (await q.all<{ id: string }>(SQL.fileIds, [sessionId, changeId])).map((r) => r.id);
}

/**
 * The `change_file_contents` rows of a change's files (given in path order, one per stored row):
 * each side's mode and the reason `reasonFor` gives it. Undefined when the change is not stored.
 */
async function sideRows<F extends { before: { mode: string | null }; after: { mode: string | null } }>(
  q: Sql,
  sessionId: string,
  changeId: string,
  files: readonly F[],
  reasonFor: (side: F['before'] | F['after']) => string | null,
): Promise<{ seq: number; rows: Param[][]; files: { fileId: string; file: F }[] } | undefined> {
  const seq = await changeSeq(q, sessionId, changeId);
  if (seq === undefined) return undefined;
  const rows: Param[][] = [];
  const paired: { fileId: string; file: F }[] = [];
  for (const [i, fileId] of (await fileIds(q, sessionId, changeId)).entries()) {
    const f = files[i];
    if (!f) continue;
    rows.push([fileId, sessionId, changeId, seq, f.before.mode, reasonFor(f.before), f.after.mode, reasonFor(f.after)]);
    paired.push({ fileId, file: f });
  }
  return { seq, rows, files: paired };
}

async function usedBytes(q: Sql, lock = ''): Promise<number> {
  return (await q.get<{ bytes: number }>(`${SQL.usage}${lock}`))!.bytes;
}

/**
 * Which of `shas` are kept, each locked while this step gives it references (on PostgreSQL a
 * release elsewhere skips a locked content instead of deleting it).
 */
async function keptOf(q: Sql, shas: readonly string[]): Promise<Set<string>> {
  const kept = new Set<string>();
  for (const chunk of chunks([...new Set(shas)], IN_CHUNK))
    for (const r of await q.all<{ sha256: string }>(
      `SELECT sha256 FROM content_blobs WHERE sha256 IN (${inList(chunk.length)})${q.dialect.forShare}`,
      chunk,
    ))
      kept.add(r.sha256);
  return kept;
}

/** The sides of `fileIds` still `pending`, as `fileId:side`. */
async function pendingSides(q: Sql, ids: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const chunk of chunks([...new Set(ids)], IN_CHUNK))
    for (const r of await q.all<{ file_id: string; before_reason: string | null; after_reason: string | null }>(
      `SELECT file_id, before_reason, after_reason FROM change_file_contents WHERE file_id IN (${inList(chunk.length)})`,
      chunk,
    )) {
      if (r.before_reason === 'pending') out.add(`${r.file_id}:before`);
      if (r.after_reason === 'pending') out.add(`${r.file_id}:after`);
    }
  return out;
}

/** Writes `blobs` in multi-row inserts, each within the row and byte bounds. */
async function insertBlobs(q: Sql, blobs: readonly PreparedContent[], now: number): Promise<void> {
  for (let at = 0; at < blobs.length;) {
    let end = at;
    let bytes = 0;
    while (
      end < blobs.length &&
      end - at < BLOBS_PER_INSERT &&
      (end === at || bytes + blobs[end]!.data.length <= BLOB_BYTES_PER_INSERT)
    )
      bytes += blobs[end++]!.data.length;
    const chunk = blobs.slice(at, end);
    await q.run(
      `${SQL.insertBlobs} VALUES ${valuesList(chunk.length, 6)} ON CONFLICT (sha256) DO NOTHING`,
      chunk.flatMap((c): Param[] => [c.sha256, c.size, c.data.length, c.codec, c.data, now]),
    );
    at = end;
  }
}

/** Makes room for `bytes` more by evicting whole older changes, oldest first; false when it cannot. */
async function makeRoom(q: Sql, bytes: number, maxBytes: number, seq: number): Promise<boolean> {
  for (;;) {
    if ((await usedBytes(q)) + bytes <= maxBytes) return true;
    const oldest = (await q.get<{ change_seq: number }>(SQL.oldestHolding, [seq]))?.change_seq;
    if (oldest === undefined) return false;
    await q.run(SIDE_SQL.before.evict, [oldest]);
    await q.run(SIDE_SQL.after.evict, [oldest]);
  }
}

interface SideWrite {
  fileId: string;
  side: 'before' | 'after';
  sha256: string | null;
  reason: string | null;
}

/** The content store over `sql` (the top-level executor, or one bound to an open transaction). */
export function createContentStore(sql: Sql): ContentsApi {
  return {
    /**
     * Records the contents of a change's files (given in path order, one per stored row): each
     * side's mode and, for a side whose content is prepared, `pending` until `fill` writes it. Call
     * inside the transaction that stored the rows; the answer is the work `fill` has to do.
     */
    record: (sessionId, changeId, files) =>
      sql.atomic(async (q) => {
        const found = await sideRows(q, sessionId, changeId, files, reasonOf);
        if (!found) return [];
        const pending: PendingContent<PreparedContent | RawContent>[] = [];
        for (const { fileId, file } of found.files)
          for (const side of SIDES) {
            const c = file[side];
            if ('sha256' in c || 'raw' in c) pending.push({ seq: found.seq, fileId, side, content: c });
          }
        // Many rows per statement: a change of thousands of files is a few statements.
        await insertRows((t, p) => q.run(t, p), SQL.insertRows, found.rows, '', ROWS_PER_INSERT);
        return pending;
      }),
    /**
     * Writes recorded contents, in one transaction. Never exceeds `maxBytes`: older changes'
     * contents are evicted first, and a content that still does not fit is recorded as `budget`. A
     * side no longer pending (its change was deleted meanwhile) is skipped, so no content is left
     * without a reference.
     */
    fill: (items, maxBytes, now) =>
      sql.atomic(async (q) => {
        if (items.length === 0) return;
        // One filler at a time across every replica, so two cannot both spend the same room.
        let used = await usedBytes(q, q.dialect.forUpdate);
        const pendingSide = await pendingSides(
          q,
          items.map((i) => i.fileId),
        );
        let kept = await keptOf(
          q,
          items.map((i) => i.content.sha256),
        );
        // Written in batches; a batch is flushed before an eviction, so every content gets its
        // reference before anything is released (an eviction could otherwise remove it).
        let blobs: PreparedContent[] = [];
        let sides: SideWrite[] = [];
        const flush = async () => {
          await insertBlobs(q, blobs, now);
          for (const side of SIDES) {
            const mine = sides.filter((s) => s.side === side);
            for (const chunk of chunks(mine, IN_CHUNK))
              await q.run(
                SIDE_SQL[side].set(chunk.length),
                chunk.flatMap((s): Param[] => [s.fileId, s.sha256, s.reason]),
              );
          }
          blobs = [];
          sides = [];
        };
        for (const [n, { seq, fileId, side, content: c }] of items.entries()) {
          if (!pendingSide.delete(`${fileId}:${side}`)) continue;
          if (!kept.has(c.sha256)) {
            if (used + c.data.length > maxBytes) {
              await flush();
              const room = await makeRoom(q, c.data.length, maxBytes, seq);
              used = await usedBytes(q);
              // An eviction may have released contents the sides still to write were to reference.
              kept = await keptOf(
                q,
                items.slice(n).map((i) => i.content.sha256),
              );
              if (!room) {
                sides.push({ fileId, side, sha256: null, reason: 'budget' });
                continue;
              }
            }
            if (!kept.has(c.sha256)) {
              blobs.push(c);
              kept.add(c.sha256);
              used += c.data.length;
            }
          }
          sides.push({ fileId, side, sha256: c.sha256, reason: null });
        }
        await flush();
      }),
    /** Sides of a change still `pending` become `reason` (their write failed). */
    settlePending: (sessionId, changeId, reason) =>
      sql.atomic(async (q) => {
        for (const side of SIDES) await q.run(SIDE_SQL[side].settle, [reason, sessionId, changeId]);
      }),
    /**
     * Records every file of a change as having no content for `reason` (the contents could not be
     * written): the file rows stay, and a revert says why it cannot restore them.
     */
    markUnavailable: (sessionId, changeId, files, reason) =>
      sql.atomic(async (q) => {
        const found = await sideRows(q, sessionId, changeId, files, (s) => (s.mode === null ? null : reason));
        if (found)
          await insertRows((t, p) => q.run(t, p), SQL.insertRows, found.rows, SQL.markConflict, ROWS_PER_INSERT);
      }),
    /** A file's stored sides; null when nothing was recorded for it. */
    async get(sessionId, changeId, fileId) {
      const row = await sql.get<ContentRow>(SQL.row, [sessionId, changeId, fileId]);
      return row ? toStored(row) : null;
    },
    /** Every recorded file of a change, by file id. */
    forChange: async (sessionId, changeId) =>
      new Map((await sql.all<ContentRow>(SQL.rows, [sessionId, changeId])).map((r) => [r.file_id, toStored(r)])),
    /** The raw bytes of a content; null when it is not (or no longer) kept. */
    async blob(sha256) {
      const row = await sql.get<{ codec: 'raw' | 'deflate'; data: Buffer }>(SQL.blob, [sha256]);
      if (!row) return null;
      return row.codec === 'deflate' ? inflateSync(row.data) : row.data;
    },
    async stats(maxBytes) {
      const u = (await sql.get<{ bytes: number; blobs: number }>(SQL.usage))!;
      return { bytes_used: u.bytes, max_bytes: maxBytes, blobs: u.blobs };
    },
  };
}
