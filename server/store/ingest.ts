import type { EdgeContentRow, EdgeEntryKind, EdgeFileRow } from '../../shared/index.ts';
import { totalsOf } from './changes.ts';
import { CONTENT_ROW_COLUMNS } from './contents.ts';
import type { Db } from './database.ts';
import type { WriteClock } from './write-clock.ts';

/**
 * The centre's side of edge to centre (migration 0007): applies one validated batch of an edge's
 * entries in one transaction. Rows are written by their natural keys (a session's id, a run's
 * session and run id, a change's session and change id, a file row's id), so a batch sent again
 * after a lost answer changes nothing. An entry that refers to something this database does not
 * hold (its session, its change's file rows) is skipped: the edge sent the row as it is now, and
 * the write that made it refer there has its own later entry.
 */

/** An entry as the ingest applies it (validated by the caller). */
export interface IngestEntry {
  id: number;
  kind: EdgeEntryKind;
  item: string;
  row: Record<string, unknown> | null;
}

/** A content from the upload, already checked against its sha256. */
export interface IngestBlob {
  sha256: string;
  size: number;
  codec: 'raw' | 'deflate';
  data: Buffer;
}

/** What applying an entry did, for the events the centre sends afterwards. */
export type IngestEffect =
  | { id: number; kind: EdgeEntryKind; item: string; action: 'created' | 'updated' | 'deleted' | 'unchanged' }
  | { id: number; kind: EdgeEntryKind; item: string; action: 'skipped' };

export type IngestOutcome =
  | { ok: true; effects: IngestEffect[] }
  | { ok: false; reason: 'session_owned_elsewhere'; owner: string }
  | { ok: false; reason: 'missing_blobs'; missing: string[] };

export interface IngestBatch {
  edge: string;
  sessionId: string;
  /** The edge database's id. */
  databaseId: string;
  /** The edge outbox's highest position when the batch was read (absent from older edges). */
  readSeq?: number | undefined;
  entries: readonly IngestEntry[];
  blobs: ReadonlyMap<string, IngestBlob>;
  now: number;
  /** The content store's budget: a content that does not fit is recorded as `budget`. */
  contentMaxBytes: number;
}

class MissingBlobs extends Error {
  constructor(readonly missing: string[]) {
    super('missing blobs');
  }
}

type Row = Record<string, unknown>;

/** The newest read of an edge session a centre applied (`edge_sessions`; nulls: none recorded). */
export interface AppliedRead {
  database_id: string | null;
  read_seq: number | null;
}

/**
 * Whether a batch was read by its edge before one the centre already applied for the session: it
 * then carries rows older than the ones stored (a session's title, a run's status, a content's
 * state), whatever their kind, and is skipped whole. Reads of one edge database are ordered by the
 * outbox's high-water mark, which never goes down; equal marks read the same rows (every write
 * notes a new position), so a batch sent again is applied again. A batch of another database of
 * that edge (recreated) starts a new order, and one without a mark (an older edge) is not ordered.
 */
export function readBeforeApplied(applied: AppliedRead, b: IngestBatch): boolean {
  return (
    b.readSeq !== undefined &&
    applied.read_seq !== null &&
    applied.database_id === b.databaseId &&
    b.readSeq < applied.read_seq
  );
}

/** The read recorded once a batch is applied (an unmarked batch keeps what was recorded). */
export function readAfter(applied: AppliedRead, b: IngestBatch): AppliedRead {
  return b.readSeq === undefined ? applied : { database_id: b.databaseId, read_seq: b.readSeq };
}

/** The answer to a batch read before one already applied: every entry skipped, nothing written. */
export const skippedWhole = (b: IngestBatch): IngestOutcome => ({
  ok: true,
  effects: b.entries.map((e) => ({ id: e.id, kind: e.kind, item: e.item, action: 'skipped' as const })),
});

/** The stored columns `had` read hold what `row` would write. */
export const same = (had: Row, row: Row): boolean => Object.keys(had).every((k) => had[k] === row[k]);

/** Synchronous; the store binds it as `IngestApi` (`sqlite-store.ts`). */
export function createIngestStore(db: Db, clock: WriteClock) {
  const owner = db.prepare<[string], string>('SELECT edge FROM edge_sessions WHERE session_id = ?').pluck();
  const claim = db.prepare<[string], { edge: string } & AppliedRead>(
    'SELECT edge, database_id, read_seq FROM edge_sessions WHERE session_id = ?',
  );
  const own = db.prepare<[string, string, number]>(
    'INSERT INTO edge_sessions (session_id, edge, first_seen_at) VALUES (?, ?, ?)',
  );
  const noteRead = db.prepare<[string | null, number | null, string]>(
    'UPDATE edge_sessions SET database_id = ?, read_seq = ? WHERE session_id = ?',
  );
  const sessionExists = db.prepare<[string], number>('SELECT 1 FROM sessions WHERE id = ?').pluck();
  const sessionRow = db.prepare<[string], Row>(
    'SELECT title, workspace, created_at, updated_at FROM sessions WHERE id = ?',
  );
  const messageRow = db.prepare<[string, string], Row>(
    'SELECT role, content, run_id, tool_call_id, created_at FROM messages WHERE session_id = ? AND id = ?',
  );
  const upsertSession = db.prepare(
    `INSERT INTO sessions (id, title, workspace, created_at, updated_at)
     VALUES (@id, @title, @workspace, @created_at, @updated_at)
     ON CONFLICT (id) DO UPDATE SET title = excluded.title, workspace = excluded.workspace,
       created_at = excluded.created_at, updated_at = excluded.updated_at`,
  );
  const deleteSession = db.prepare<[string]>('DELETE FROM sessions WHERE id = ?');
  const upsertMessage = db.prepare(
    `INSERT INTO messages (id, session_id, role, content, run_id, tool_call_id, created_at)
     VALUES (@id, @session_id, @role, @content, @run_id, @tool_call_id, @created_at)
     ON CONFLICT (session_id, id) DO UPDATE SET role = excluded.role, content = excluded.content,
       run_id = excluded.run_id, tool_call_id = excluded.tool_call_id, created_at = excluded.created_at`,
  );
  const deleteMessage = db.prepare<[string, string]>('DELETE FROM messages WHERE session_id = ? AND id = ?');
  const activity = {
    run: {
      row: db.prepare<[string, string], Row>(
        `SELECT status, source, workspace, started_at, finished_at, error, change_id, tracking, reason
         FROM runs WHERE session_id = ? AND run_id = ?`,
      ),
      upsert: db.prepare(
        `INSERT INTO runs (session_id, run_id, status, source, workspace, started_at, finished_at, error, change_id,
           tracking, reason)
         VALUES (@session_id, @run_id, @status, @source, @workspace, @started_at, @finished_at, @error, @change_id,
           @tracking, @reason)
         ON CONFLICT (session_id, run_id) DO UPDATE SET status = excluded.status, source = excluded.source,
           workspace = excluded.workspace, started_at = excluded.started_at, finished_at = excluded.finished_at,
           error = excluded.error, change_id = excluded.change_id, tracking = excluded.tracking,
           reason = excluded.reason`,
      ),
      remove: db.prepare<[string, string]>('DELETE FROM runs WHERE session_id = ? AND run_id = ?'),
    },
    tool_call: {
      row: db.prepare<[string, string], Row>(
        `SELECT run_id, name, status, workspace, started_at, finished_at, error, change_id, tracking, reason
         FROM tool_calls WHERE session_id = ? AND tool_call_id = ?`,
      ),
      upsert: db.prepare(
        `INSERT INTO tool_calls (session_id, tool_call_id, run_id, name, status, workspace, started_at, finished_at,
           error, change_id, tracking, reason)
         VALUES (@session_id, @tool_call_id, @run_id, @name, @status, @workspace, @started_at, @finished_at, @error,
           @change_id, @tracking, @reason)
         ON CONFLICT (session_id, tool_call_id) DO UPDATE SET run_id = excluded.run_id, name = excluded.name,
           status = excluded.status, workspace = excluded.workspace, started_at = excluded.started_at,
           finished_at = excluded.finished_at, error = excluded.error, change_id = excluded.change_id,
           tracking = excluded.tracking, reason = excluded.reason`,
      ),
      remove: db.prepare<[string, string]>('DELETE FROM tool_calls WHERE session_id = ? AND tool_call_id = ?'),
    },
  };
  const changeSeq = db
    .prepare<[string, string], number>('SELECT seq FROM workspace_run_changes WHERE session_id = ? AND change_id = ?')
    .pluck();
  const insertChange = db.prepare(
    `INSERT INTO workspace_run_changes (change_id, session_id, run_id, tool_call_id, source, workspace,
       workspace_kind, started_at, finished_at, changed_count, added_count, modified_count, deleted_count,
       renamed_count, binary_count, truncated, truncated_reasons, total_patch_bytes, overlapping, omitted_count,
       created_at)
     VALUES (@change_id, @session_id, @run_id, @tool_call_id, @source, @workspace, @workspace_kind, @started_at,
       @finished_at, @changed_count, @added_count, @modified_count, @deleted_count, @renamed_count, @binary_count,
       @truncated, @truncated_reasons, @total_patch_bytes, @overlapping, @omitted_count, @created_at)`,
  );
  // The totals are the centre's own figures over the rows it stores, as for a change stored here.
  const setTotals = db.prepare(
    `UPDATE workspace_run_changes SET total_additions = @total_additions, total_deletions = @total_deletions
     WHERE session_id = @session_id AND change_id = @change_id`,
  );
  const insertFile = db.prepare(
    `INSERT INTO workspace_run_change_files (id, change_id, session_id, ord, path, old_path, path_base64,
       old_path_base64, change_type, additions, deletions, size_before, size_after, patch, patch_bytes, truncated,
       binary, omitted_reason, created_at)
     VALUES (@id, @change_id, @session_id, @ord, @path, @old_path, @path_base64, @old_path_base64, @change_type,
       @additions, @deletions, @size_before, @size_after, @patch, @patch_bytes, @truncated, @binary,
       @omitted_reason, @created_at)`,
  );
  const deleteChange = db.prepare<[string, string]>(
    'DELETE FROM workspace_run_changes WHERE session_id = ? AND change_id = ?',
  );
  const fileOf = db
    .prepare<[string, string, string], number>(
      'SELECT 1 FROM workspace_run_change_files WHERE id = ? AND session_id = ? AND change_id = ?',
    )
    .pluck();
  const contentOf = db.prepare<[string], EdgeContentRow>(
    `SELECT ${CONTENT_ROW_COLUMNS} FROM change_file_contents WHERE file_id = ?`,
  );
  const upsertContent = db.prepare(
    `INSERT INTO change_file_contents (file_id, session_id, change_id, change_seq, before_mode, before_sha256,
       before_reason, after_mode, after_sha256, after_reason)
     VALUES (@file_id, @session_id, @change_id, @change_seq, @before_mode, @before_sha256, @before_reason,
       @after_mode, @after_sha256, @after_reason)
     ON CONFLICT (file_id) DO UPDATE SET before_mode = excluded.before_mode, before_sha256 = excluded.before_sha256,
       before_reason = excluded.before_reason, after_mode = excluded.after_mode, after_sha256 = excluded.after_sha256,
       after_reason = excluded.after_reason`,
  );
  const blobExists = db.prepare<[string], number>('SELECT 1 FROM content_blobs WHERE sha256 = ?').pluck();
  const insertBlob = db.prepare(
    `INSERT INTO content_blobs (sha256, size, stored_bytes, codec, data, created_at)
     VALUES (@sha256, @size, @stored_bytes, @codec, @data, @created_at)`,
  );
  const usedBytes = db.prepare<[], number>('SELECT bytes FROM content_usage WHERE id = 1').pluck();
  const markOf = db.prepare<[string, string, string], Row>(
    `SELECT change_id, file_id, viewed_at FROM viewed_marks WHERE session_id = ? AND path = ? AND path_base64 = ?`,
  );
  const upsertMark = db.prepare(
    `INSERT INTO viewed_marks (session_id, path, path_base64, change_id, change_seq, file_id, viewed_at)
     VALUES (@session_id, @path, @path_base64, @change_id, @change_seq, @file_id, @viewed_at)
     ON CONFLICT (session_id, path, path_base64) DO UPDATE SET change_id = excluded.change_id,
       change_seq = excluded.change_seq, file_id = excluded.file_id, viewed_at = excluded.viewed_at`,
  );
  const deleteMark = db.prepare<[string, string, string]>(
    'DELETE FROM viewed_marks WHERE session_id = ? AND path = ? AND path_base64 = ?',
  );

  /** A content side's blob: already here, written from the upload, or (over the budget) not kept. */
  function keepBlob(sha: string, b: IngestBatch, missing: string[]): 'kept' | 'budget' | 'missing' {
    if (blobExists.get(sha) !== undefined) return 'kept';
    const blob = b.blobs.get(sha);
    if (!blob) {
      missing.push(sha);
      return 'missing';
    }
    if (usedBytes.get()! + blob.data.length > b.contentMaxBytes) return 'budget';
    insertBlob.run({
      sha256: sha,
      size: blob.size,
      stored_bytes: blob.data.length,
      codec: blob.codec,
      data: blob.data,
      created_at: b.now,
    });
    return 'kept';
  }

  function applyContents(
    sessionId: string,
    changeId: string,
    rows: EdgeContentRow[],
    b: IngestBatch,
    missing: string[],
  ) {
    const seq = changeSeq.get(sessionId, changeId);
    if (seq === undefined) return 'skipped' as const;
    let changed = false;
    for (const r of rows) {
      if (fileOf.get(r.file_id, sessionId, changeId) === undefined) continue;
      const next = { ...r };
      let lacking = false;
      for (const side of ['before', 'after'] as const) {
        const sha = r[`${side}_sha256`];
        if (sha === null) continue;
        const kept = keepBlob(sha, b, missing);
        if (kept === 'missing') lacking = true;
        if (kept === 'budget') {
          next[`${side}_sha256`] = null;
          next[`${side}_reason`] = 'budget';
        }
      }
      // The batch is refused (rolled back) after every missing content has been named.
      if (lacking) continue;
      const had = contentOf.get(r.file_id);
      if (had && JSON.stringify(had) === JSON.stringify(next)) continue;
      upsertContent.run({ ...next, session_id: sessionId, change_id: changeId, change_seq: seq });
      changed = true;
    }
    return changed ? ('updated' as const) : ('unchanged' as const);
  }

  function applyEntry(e: IngestEntry, b: IngestBatch, missing: string[]): IngestEffect['action'] {
    const s = b.sessionId;
    const row = e.row;
    if (e.kind === 'session' || e.kind === 'session_deleted') {
      if (e.kind === 'session_deleted' || row === null)
        return deleteSession.run(s).changes > 0 ? 'deleted' : 'unchanged';
      const had = sessionRow.get(s);
      if (had && same(had, row)) return 'unchanged';
      upsertSession.run({ ...row, id: s });
      return had ? 'updated' : 'created';
    }
    if (sessionExists.get(s) === undefined) return 'skipped';
    switch (e.kind) {
      case 'message': {
        if (row === null) return deleteMessage.run(s, e.item).changes > 0 ? 'deleted' : 'unchanged';
        const had = messageRow.get(s, e.item);
        if (had && same(had, row)) return 'unchanged';
        upsertMessage.run({ ...row, id: e.item, session_id: s });
        return had ? 'updated' : 'created';
      }
      case 'run':
      case 'tool_call': {
        const t = activity[e.kind];
        if (row === null) return t.remove.run(s, e.item).changes > 0 ? 'deleted' : 'unchanged';
        const had = t.row.get(s, e.item);
        if (had && same(had, row)) return 'unchanged';
        const key = e.kind === 'run' ? { run_id: e.item } : { tool_call_id: e.item };
        t.upsert.run({ ...row, ...key, session_id: s });
        return had ? 'updated' : 'created';
      }
      case 'change': {
        if (row === null) return deleteChange.run(s, e.item).changes > 0 ? 'deleted' : 'unchanged';
        // A stored change never changes: stored once, it is only ever deleted.
        if (changeSeq.get(s, e.item) !== undefined) return 'unchanged';
        const { files, ...summary } = row as Row & { files: EdgeFileRow[] };
        insertChange.run({ ...summary, change_id: e.item, session_id: s });
        for (const f of files) insertFile.run({ ...f, change_id: e.item, session_id: s });
        setTotals.run({ ...totalsOf(files), change_id: e.item, session_id: s });
        return 'created';
      }
      case 'contents':
        if (row === null) return 'unchanged';
        return applyContents(s, e.item, (row as { rows: EdgeContentRow[] }).rows, b, missing);
      case 'viewed': {
        const [path, pathBase64] = JSON.parse(e.item) as [string, string];
        if (row === null) return deleteMark.run(s, path, pathBase64).changes > 0 ? 'deleted' : 'unchanged';
        const changeId = row.change_id as string;
        const seq = changeSeq.get(s, changeId);
        if (seq === undefined || fileOf.get(row.file_id as string, s, changeId) === undefined) return 'skipped';
        const had = markOf.get(s, path, pathBase64);
        if (had && had.file_id === row.file_id && had.viewed_at === row.viewed_at) return 'unchanged';
        upsertMark.run({ ...row, session_id: s, path, path_base64: pathBase64, change_seq: seq });
        return had ? 'updated' : 'created';
      }
    }
  }

  const apply = db.transaction((b: IngestBatch): IngestOutcome => {
    const owned = claim.get(b.sessionId);
    if (owned !== undefined && owned.edge !== b.edge)
      return { ok: false, reason: 'session_owned_elsewhere', owner: owned.edge };
    if (owned === undefined) {
      // A session this server stored itself (or one from before edges) is not taken over.
      if (sessionExists.get(b.sessionId) !== undefined)
        return { ok: false, reason: 'session_owned_elsewhere', owner: '(this server)' };
      own.run(b.sessionId, b.edge, b.now);
    }
    const applied: AppliedRead = owned ?? { database_id: null, read_seq: null };
    if (readBeforeApplied(applied, b)) return skippedWhole(b);
    const next = readAfter(applied, b);
    noteRead.run(next.database_id, next.read_seq, b.sessionId);
    const missing: string[] = [];
    const effects = b.entries.map((e): IngestEffect => ({
      id: e.id,
      kind: e.kind,
      item: e.item,
      action: applyEntry(e, b, missing),
    }));
    // Rolled back whole: the edge sends the named contents with the same entries again.
    if (missing.length > 0) throw new MissingBlobs([...new Set(missing)]);
    return { ok: true, effects };
  });

  return {
    /** Applies one session's batch from `edge`, all or nothing. */
    apply(batch: IngestBatch): IngestOutcome {
      try {
        const outcome = apply(batch);
        if (outcome.ok && outcome.effects.some((e) => e.action !== 'unchanged' && e.action !== 'skipped'))
          clock.bump(batch.sessionId);
        return outcome;
      } catch (err) {
        if (err instanceof MissingBlobs) return { ok: false, reason: 'missing_blobs', missing: err.missing };
        throw err;
      }
    },
    /** The edge that owns a session received from one; null for this server's own sessions. */
    ownerOf(sessionId: string): string | null {
      return owner.get(sessionId) ?? null;
    },
  };
}
