import { inflateSync } from 'node:zlib';
import type { ContentStoreStats, ContentUnavailableReason } from '../../shared/index.ts';
import type { Db } from './database.ts';

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

export function createContentStore(db: Db) {
  const changeSeq = db
    .prepare<[string, string], number>('SELECT seq FROM workspace_run_changes WHERE session_id = ? AND change_id = ?')
    .pluck();
  const fileIds = db
    .prepare<[string, string], string>(
      'SELECT id FROM workspace_run_change_files WHERE session_id = ? AND change_id = ? ORDER BY ord',
    )
    .pluck();
  const insertRow = db.prepare(
    `INSERT INTO change_file_contents (file_id, session_id, change_id, change_seq, before_mode, before_reason,
       after_mode, after_reason) VALUES (@file_id, @session_id, @change_id, @change_seq, @before_mode,
       @before_reason, @after_mode, @after_reason)`,
  );
  const setSide = {
    before: db.prepare<[string | null, string | null, string]>(
      'UPDATE change_file_contents SET before_sha256 = ?, before_reason = ? WHERE file_id = ?',
    ),
    after: db.prepare<[string | null, string | null, string]>(
      'UPDATE change_file_contents SET after_sha256 = ?, after_reason = ? WHERE file_id = ?',
    ),
  };
  const blobExists = db.prepare<[string], number>('SELECT 1 FROM content_blobs WHERE sha256 = ?').pluck();
  const insertBlob = db.prepare(
    `INSERT INTO content_blobs (sha256, size, stored_bytes, codec, data, created_at)
     VALUES (@sha256, @size, @stored_bytes, @codec, @data, @created_at)`,
  );
  const usage = db.prepare<[], { bytes: number; blobs: number }>('SELECT bytes, blobs FROM content_usage WHERE id = 1');
  // Oldest first; rows already emptied by an earlier eviction are skipped.
  const oldestHolding = db
    .prepare<[number], number>(
      `SELECT change_seq FROM change_file_contents
       WHERE change_seq < ? AND (before_sha256 IS NOT NULL OR after_sha256 IS NOT NULL)
       ORDER BY change_seq LIMIT 1`,
    )
    .pluck();
  const evictBefore = db.prepare<[number]>(
    "UPDATE change_file_contents SET before_sha256 = NULL, before_reason = 'evicted' WHERE change_seq = ? AND before_sha256 IS NOT NULL",
  );
  const evictAfter = db.prepare<[number]>(
    "UPDATE change_file_contents SET after_sha256 = NULL, after_reason = 'evicted' WHERE change_seq = ? AND after_sha256 IS NOT NULL",
  );
  const getRow = db.prepare<[string, string, string], ContentRow>(
    `SELECT ${CONTENT_ROW_COLUMNS}
     FROM change_file_contents WHERE session_id = ? AND change_id = ? AND file_id = ?`,
  );
  const listRows = db.prepare<[string, string], ContentRow>(
    `SELECT ${CONTENT_ROW_COLUMNS}
     FROM change_file_contents WHERE session_id = ? AND change_id = ?`,
  );
  const getBlob = db.prepare<[string], { codec: 'raw' | 'deflate'; data: Buffer; size: number }>(
    'SELECT codec, data, size FROM content_blobs WHERE sha256 = ?',
  );
  // A side's reason is read with the file id: the column name is not a parameter.
  const sideReason = {
    before: db
      .prepare<[string], string | null>('SELECT before_reason FROM change_file_contents WHERE file_id = ?')
      .pluck(),
    after: db
      .prepare<[string], string | null>('SELECT after_reason FROM change_file_contents WHERE file_id = ?')
      .pluck(),
  };
  const settleBefore = db.prepare<[string, string, string]>(
    "UPDATE change_file_contents SET before_reason = ? WHERE session_id = ? AND change_id = ? AND before_reason = 'pending'",
  );
  const settleAfter = db.prepare<[string, string, string]>(
    "UPDATE change_file_contents SET after_reason = ? WHERE session_id = ? AND change_id = ? AND after_reason = 'pending'",
  );
  const markRow = db.prepare(
    `INSERT OR REPLACE INTO change_file_contents (file_id, session_id, change_id, change_seq, before_mode,
       before_reason, after_mode, after_reason) VALUES (@file_id, @session_id, @change_id, @change_seq,
       @before_mode, @before_reason, @after_mode, @after_reason)`,
  );

  /** Makes room for `bytes` more by evicting whole older changes, oldest first; false when it cannot. */
  function makeRoom(bytes: number, maxBytes: number, seq: number): boolean {
    for (;;) {
      if (usage.get()!.bytes + bytes <= maxBytes) return true;
      const oldest = oldestHolding.get(seq);
      if (oldest === undefined) return false;
      evictBefore.run(oldest);
      evictAfter.run(oldest);
    }
  }

  return {
    /**
     * Records the contents of a change's files (given in path order, one per stored row): each
     * side's mode and, for a side whose content is prepared, `pending` until `fill` writes it. Call
     * inside the transaction that stored the rows; the answer is the work `fill` has to do.
     */
    record(
      sessionId: string,
      changeId: string,
      files: readonly FileContentInput[],
    ): PendingContent<PreparedContent | RawContent>[] {
      const seq = changeSeq.get(sessionId, changeId);
      if (seq === undefined) return [];
      const pending: PendingContent<PreparedContent | RawContent>[] = [];
      fileIds.all(sessionId, changeId).forEach((fileId, i) => {
        const f = files[i];
        if (!f) return;
        const reasonOf = (s: ContentSideInput) => (s.mode === null ? null : 'reason' in s ? s.reason : 'pending');
        insertRow.run({
          file_id: fileId,
          session_id: sessionId,
          change_id: changeId,
          change_seq: seq,
          before_mode: f.before.mode,
          before_reason: reasonOf(f.before),
          after_mode: f.after.mode,
          after_reason: reasonOf(f.after),
        });
        for (const side of SIDES) {
          const c = f[side];
          if ('sha256' in c || 'raw' in c) pending.push({ seq, fileId, side, content: c });
        }
      });
      return pending;
    },
    /**
     * Writes recorded contents, in one transaction. Never exceeds `maxBytes`: older changes'
     * contents are evicted first, and a content that still does not fit is recorded as `budget`. A
     * side no longer pending (its change was deleted meanwhile) is skipped, so no content is left
     * without a reference.
     */
    fill(items: readonly PendingContent[], maxBytes: number, now: number): void {
      for (const { seq, fileId, side, content: c } of items) {
        if (sideReason[side].get(fileId) !== 'pending') continue;
        // Referenced at once, so a later eviction in this loop cannot remove it.
        if (blobExists.get(c.sha256) === undefined) {
          if (!makeRoom(c.data.length, maxBytes, seq)) {
            setSide[side].run(null, 'budget', fileId);
            continue;
          }
          insertBlob.run({
            sha256: c.sha256,
            size: c.size,
            stored_bytes: c.data.length,
            codec: c.codec,
            data: c.data,
            created_at: now,
          });
        }
        setSide[side].run(c.sha256, null, fileId);
      }
    },
    /** Sides of a change still `pending` become `reason` (their write failed). */
    settlePending(sessionId: string, changeId: string, reason: ContentUnavailableReason): void {
      settleBefore.run(reason, sessionId, changeId);
      settleAfter.run(reason, sessionId, changeId);
    },
    /**
     * Records every file of a change as having no content for `reason` (the contents could not be
     * written): the file rows stay, and a revert says why it cannot restore them.
     */
    markUnavailable(
      sessionId: string,
      changeId: string,
      files: readonly FileContentInput[],
      reason: ContentUnavailableReason,
    ): void {
      const seq = changeSeq.get(sessionId, changeId);
      if (seq === undefined) return;
      fileIds.all(sessionId, changeId).forEach((fileId, i) => {
        const f = files[i];
        if (!f) return;
        markRow.run({
          file_id: fileId,
          session_id: sessionId,
          change_id: changeId,
          change_seq: seq,
          before_mode: f.before.mode,
          before_reason: f.before.mode === null ? null : reason,
          after_mode: f.after.mode,
          after_reason: f.after.mode === null ? null : reason,
        });
      });
    },
    /** A file's stored sides; null when nothing was recorded for it. */
    get(sessionId: string, changeId: string, fileId: string): StoredContent | null {
      const row = getRow.get(sessionId, changeId, fileId);
      return row ? toStored(row) : null;
    },
    /** Every recorded file of a change, by file id. */
    forChange(sessionId: string, changeId: string): Map<string, StoredContent> {
      return new Map(listRows.all(sessionId, changeId).map((r) => [r.file_id, toStored(r)]));
    },
    /** The raw bytes of a content; null when it is not (or no longer) kept. */
    blob(sha256: string): Buffer | null {
      const row = getBlob.get(sha256);
      if (!row) return null;
      return row.codec === 'deflate' ? inflateSync(row.data) : row.data;
    },
    stats(maxBytes: number): ContentStoreStats {
      const u = usage.get()!;
      return { bytes_used: u.bytes, max_bytes: maxBytes, blobs: u.blobs };
    },
  };
}

export type ContentStore = ReturnType<typeof createContentStore>;
