import type { EdgeContentRow, EdgeEntryKind, EdgeFileRow } from '../../shared/index.ts';
import { chunks, inList, insertRows, rowsPerStatement, valuesList } from './batches.ts';
import { quoteColumn, totalsOf } from './changes.ts';
import { CONTENT_SIDE_COLUMNS } from './contents.ts';
import {
  EDGE_CHANGE_COLUMNS,
  EDGE_FILE_COLUMNS,
  EDGE_MESSAGE_COLUMNS,
  EDGE_RUN_COLUMNS,
  EDGE_SESSION_COLUMNS,
  EDGE_TOOL_CALL_COLUMNS,
} from './edge-columns.ts';
import type { WriteClock } from './sql/clock.ts';
import type { Param, Sql } from './sql/types.ts';
import type { IngestApi } from './types.ts';

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

/** A batch refused whole: thrown inside its transaction, so nothing of it is stored. */
class Refused extends Error {
  constructor(readonly outcome: IngestOutcome) {
    super('refused');
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

/** A value of a validated entry's row, bound as it came (the edge sends its stored rows). */
const param = (v: unknown): Param => v as Param;

/** `INSERT ... ON CONFLICT (key) DO UPDATE` of `key` + `cols`, one row of placeholders. */
function upsertSql(table: string, key: readonly string[], cols: readonly string[]): string {
  const all = [...key, ...cols];
  return `INSERT INTO ${table} (${all.map(quoteColumn).join(', ')}) VALUES (${inList(all.length)})
    ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${cols.map((c) => `${quoteColumn(c)} = excluded.${quoteColumn(c)}`).join(', ')}`;
}

const SQL = {
  owner: 'SELECT edge FROM edge_sessions WHERE session_id = ?',
  claim: 'SELECT edge, database_id, read_seq FROM edge_sessions WHERE session_id = ?',
  own: `INSERT INTO edge_sessions (session_id, edge, first_seen_at) VALUES (?, ?, ?)
     ON CONFLICT (session_id) DO NOTHING`,
  noteRead: 'UPDATE edge_sessions SET database_id = ?, read_seq = ? WHERE session_id = ?',
  sessionExists: 'SELECT 1 AS one FROM sessions WHERE id = ?',
  sessionRow: `SELECT ${EDGE_SESSION_COLUMNS.join(', ')} FROM sessions WHERE id = ?`,
  upsertSession: upsertSql('sessions', ['id'], EDGE_SESSION_COLUMNS),
  deleteSession: 'DELETE FROM sessions WHERE id = ?',
  messageRow: `SELECT ${EDGE_MESSAGE_COLUMNS.join(', ')} FROM messages WHERE session_id = ? AND id = ?`,
  upsertMessage: upsertSql('messages', ['session_id', 'id'], EDGE_MESSAGE_COLUMNS),
  deleteMessage: 'DELETE FROM messages WHERE session_id = ? AND id = ?',
  changeSeq: 'SELECT seq FROM workspace_run_changes WHERE session_id = ? AND change_id = ?',
  insertChange: `INSERT INTO workspace_run_changes (change_id, session_id, ${EDGE_CHANGE_COLUMNS.join(', ')})
     VALUES (${inList(EDGE_CHANGE_COLUMNS.length + 2)})`,
  insertFiles: `INSERT INTO workspace_run_change_files (change_id, session_id, ${EDGE_FILE_COLUMNS.map(quoteColumn).join(', ')})`,
  // The totals are the centre's own figures over the rows it stores, as for a change stored here.
  setTotals: `UPDATE workspace_run_changes SET total_additions = ?, total_deletions = ?
     WHERE session_id = ? AND change_id = ?`,
  deleteChange: 'DELETE FROM workspace_run_changes WHERE session_id = ? AND change_id = ?',
  fileOf: 'SELECT 1 AS one FROM workspace_run_change_files WHERE id = ? AND session_id = ? AND change_id = ?',
  changeFiles: 'SELECT id FROM workspace_run_change_files WHERE session_id = ? AND change_id = ?',
  recorded: `SELECT file_id, ${CONTENT_SIDE_COLUMNS.join(', ')} FROM change_file_contents
     WHERE session_id = ? AND change_id = ?`,
  upsertContents: `INSERT INTO change_file_contents (file_id, session_id, change_id, change_seq,
     ${CONTENT_SIDE_COLUMNS.join(', ')})`,
  upsertContentsConflict: ` ON CONFLICT (file_id) DO UPDATE SET ${['session_id', 'change_id', 'change_seq', ...CONTENT_SIDE_COLUMNS].map((c) => `${c} = excluded.${c}`).join(', ')}`,
  insertBlobs: 'INSERT INTO content_blobs (sha256, size, stored_bytes, codec, data, created_at)',
  usedBytes: 'SELECT bytes FROM content_usage WHERE id = 1',
  markOf: 'SELECT file_id, viewed_at FROM viewed_marks WHERE session_id = ? AND path = ? AND path_base64 = ?',
  upsertMark: upsertSql(
    'viewed_marks',
    ['session_id', 'path', 'path_base64'],
    ['change_id', 'change_seq', 'file_id', 'viewed_at'],
  ),
  deleteMark: 'DELETE FROM viewed_marks WHERE session_id = ? AND path = ? AND path_base64 = ?',
};

/** What a run's or a tool call's entry writes, by kind. */
const ACTIVITY = {
  run: activitySql('runs', 'run_id', EDGE_RUN_COLUMNS),
  tool_call: activitySql('tool_calls', 'tool_call_id', EDGE_TOOL_CALL_COLUMNS),
};

function activitySql(table: string, id: string, cols: readonly string[]) {
  const key = `session_id = ? AND ${id} = ?`;
  return {
    cols,
    row: `SELECT ${cols.join(', ')} FROM ${table} WHERE ${key}`,
    upsert: upsertSql(table, ['session_id', id], cols),
    remove: `DELETE FROM ${table} WHERE ${key}`,
  };
}

/** Rows per multi-row statement of blobs, and their data bytes at most (one statement holds them all). */
const BLOBS_PER_INSERT = 200;
const BLOB_BYTES_PER_INSERT = 16 * 1024 * 1024;
const IN_CHUNK = 500;
const CONTENT_WIDTH = 4 + CONTENT_SIDE_COLUMNS.length;

async function changeSeq(q: Sql, s: string, changeId: string): Promise<number | undefined> {
  return (await q.get<{ seq: number }>(SQL.changeSeq, [s, changeId]))?.seq;
}

/**
 * The blobs a contents entry names, decided in a few statements instead of a few per side: which are
 * held already, which the upload brings (written in multi-row inserts while the content budget has
 * room, in the order the rows name them), which are over the budget, and which are missing.
 */
async function keepBlobs(
  q: Sql,
  shas: string[],
  b: IngestBatch,
  missing: string[],
): Promise<Map<string, 'kept' | 'budget' | 'missing'>> {
  const outcome = new Map<string, 'kept' | 'budget' | 'missing'>();
  const wanted = [...new Set(shas)];
  if (wanted.length === 0) return outcome;
  for (const chunk of chunks(wanted, IN_CHUNK))
    for (const r of await q.all<{ sha256: string }>(
      `SELECT sha256 FROM content_blobs WHERE sha256 IN (${inList(chunk.length)})`,
      chunk,
    ))
      outcome.set(r.sha256, 'kept');
  let used = (await q.get<{ bytes: number }>(SQL.usedBytes))!.bytes;
  const writes: IngestBlob[] = [];
  for (const sha of wanted) {
    if (outcome.has(sha)) continue;
    const blob = b.blobs.get(sha);
    if (!blob) {
      missing.push(sha);
      outcome.set(sha, 'missing');
    } else if (used + blob.data.length > b.contentMaxBytes) {
      outcome.set(sha, 'budget');
    } else {
      used += blob.data.length;
      writes.push(blob);
      outcome.set(sha, 'kept');
    }
  }
  for (let at = 0; at < writes.length;) {
    let end = at;
    let bytes = 0;
    while (
      end < writes.length &&
      end - at < BLOBS_PER_INSERT &&
      (end === at || bytes + writes[end]!.data.length <= BLOB_BYTES_PER_INSERT)
    )
      bytes += writes[end++]!.data.length;
    const chunk = writes.slice(at, end);
    await q.run(
      `${SQL.insertBlobs} VALUES ${valuesList(chunk.length, 6)} ON CONFLICT (sha256) DO NOTHING`,
      chunk.flatMap((w): Param[] => [w.sha256, w.size, w.data.length, w.codec, w.data, b.now]),
    );
    at = end;
  }
  return outcome;
}

async function applyContents(
  q: Sql,
  s: string,
  changeId: string,
  rows: EdgeContentRow[],
  b: IngestBatch,
  missing: string[],
) {
  const seq = await changeSeq(q, s, changeId);
  if (seq === undefined) return 'skipped' as const;
  // The change's file rows and their recorded sides, read once for all rows of the entry.
  const files = new Set((await q.all<{ id: string }>(SQL.changeFiles, [s, changeId])).map((r) => r.id));
  const recorded = new Map(
    (await q.all<Row & { file_id: string }>(SQL.recorded, [s, changeId])).map((r) => [r.file_id, r]),
  );
  const ours = rows.filter((r) => files.has(r.file_id));
  const blobs = await keepBlobs(
    q,
    ours.flatMap((r) => [r.before_sha256, r.after_sha256].filter((sha): sha is string => sha !== null)),
    b,
    missing,
  );
  // One row per file (a later row for the same file wins, as it would written one at a time).
  const byFile = new Map<string, Param[]>();
  for (const r of ours) {
    const next: Row = { ...r };
    let lacking = false;
    for (const side of ['before', 'after'] as const) {
      const sha = r[`${side}_sha256`];
      if (sha === null) continue;
      const kept = blobs.get(sha);
      if (kept === 'missing') lacking = true;
      if (kept === 'budget') {
        next[`${side}_sha256`] = null;
        next[`${side}_reason`] = 'budget';
      }
    }
    // The batch is refused (rolled back) after every missing content has been named.
    if (lacking) continue;
    const had = recorded.get(r.file_id);
    if (had && CONTENT_SIDE_COLUMNS.every((c) => had[c] === next[c])) continue;
    byFile.delete(r.file_id);
    byFile.set(r.file_id, [r.file_id, s, changeId, seq, ...CONTENT_SIDE_COLUMNS.map((c) => param(next[c]))]);
  }
  const upserts = [...byFile.values()];
  await insertRows(
    (t, p) => q.run(t, p),
    SQL.upsertContents,
    upserts,
    SQL.upsertContentsConflict,
    rowsPerStatement(CONTENT_WIDTH),
  );
  return upserts.length > 0 ? ('updated' as const) : ('unchanged' as const);
}

async function applyEntry(q: Sql, e: IngestEntry, b: IngestBatch, missing: string[]): Promise<IngestEffect['action']> {
  const s = b.sessionId;
  const row = e.row;
  const deleted = async (text: string, params: Param[]) =>
    (await q.run(text, params)) > 0 ? ('deleted' as const) : ('unchanged' as const);
  if (e.kind === 'session' || e.kind === 'session_deleted') {
    if (e.kind === 'session_deleted' || row === null) return deleted(SQL.deleteSession, [s]);
    const had = await q.get<Row>(SQL.sessionRow, [s]);
    if (had && same(had, row)) return 'unchanged';
    await q.run(SQL.upsertSession, [s, ...EDGE_SESSION_COLUMNS.map((c) => param(row[c]))]);
    return had ? 'updated' : 'created';
  }
  if ((await q.get(SQL.sessionExists, [s])) === undefined) return 'skipped';
  switch (e.kind) {
    case 'message': {
      if (row === null) return deleted(SQL.deleteMessage, [s, e.item]);
      const had = await q.get<Row>(SQL.messageRow, [s, e.item]);
      if (had && same(had, row)) return 'unchanged';
      await q.run(SQL.upsertMessage, [s, e.item, ...EDGE_MESSAGE_COLUMNS.map((c) => param(row[c]))]);
      return had ? 'updated' : 'created';
    }
    case 'run':
    case 'tool_call': {
      const t = ACTIVITY[e.kind];
      if (row === null) return deleted(t.remove, [s, e.item]);
      const had = await q.get<Row>(t.row, [s, e.item]);
      if (had && same(had, row)) return 'unchanged';
      await q.run(t.upsert, [s, e.item, ...t.cols.map((c) => param(row[c]))]);
      return had ? 'updated' : 'created';
    }
    case 'change': {
      if (row === null) return deleted(SQL.deleteChange, [s, e.item]);
      // A stored change never changes: stored once, it is only ever deleted.
      if ((await changeSeq(q, s, e.item)) !== undefined) return 'unchanged';
      const files = row.files as EdgeFileRow[];
      await q.run(SQL.insertChange, [e.item, s, ...EDGE_CHANGE_COLUMNS.map((c) => param(row[c]))]);
      // Many rows per statement: a change of 100,000 files is a few hundred statements.
      await insertRows(
        (t, p) => q.run(t, p),
        SQL.insertFiles,
        files.map((f): Param[] => [e.item, s, ...EDGE_FILE_COLUMNS.map((c) => param(f[c]))]),
        '',
        rowsPerStatement(EDGE_FILE_COLUMNS.length + 2),
      );
      const totals = totalsOf(files);
      await q.run(SQL.setTotals, [totals.total_additions, totals.total_deletions, s, e.item]);
      return 'created';
    }
    case 'contents':
      if (row === null) return 'unchanged';
      return applyContents(q, s, e.item, (row as { rows: EdgeContentRow[] }).rows, b, missing);
    case 'viewed': {
      const [path, pathBase64] = JSON.parse(e.item) as [string, string];
      const key = [s, path, pathBase64];
      if (row === null) return deleted(SQL.deleteMark, key);
      const changeId = row.change_id as string;
      const seq = await changeSeq(q, s, changeId);
      if (seq === undefined || (await q.get(SQL.fileOf, [param(row.file_id), s, changeId])) === undefined)
        return 'skipped';
      const had = await q.get<Row>(SQL.markOf, key);
      if (had && had.file_id === row.file_id && had.viewed_at === row.viewed_at) return 'unchanged';
      await q.run(SQL.upsertMark, [...key, changeId, seq, param(row.file_id), param(row.viewed_at)]);
      return had ? 'updated' : 'created';
    }
  }
}

/**
 * The session's owner, claimed for `b.edge` when it has none, and locked until the batch's
 * transaction ends (the batches of one session are applied one at a time). Race-safe on
 * PostgreSQL: of two batches claiming one new session at once (two edges, or two replicas), one
 * inserts and the other's insert waits for it, then does nothing and reads the owner that
 * committed; an edge that lost is refused as `session_owned_elsewhere`, never failed.
 */
async function claimSession(q: Sql, b: IngestBatch): Promise<AppliedRead> {
  type Owner = { edge: string } & AppliedRead;
  const claimed = `${SQL.claim}${q.dialect.forUpdate}`;
  let owned = await q.get<Owner>(claimed, [b.sessionId]);
  if (owned === undefined) {
    // A session this server stored itself (or one from before edges) is not taken over.
    if ((await q.get(SQL.sessionExists, [b.sessionId])) !== undefined)
      throw new Refused({ ok: false, reason: 'session_owned_elsewhere', owner: '(this server)' });
    if ((await q.run(SQL.own, [b.sessionId, b.edge, b.now])) === 1) return { database_id: null, read_seq: null };
    // Claimed meanwhile by a transaction that has committed since: a new statement sees its row.
    owned = (await q.get<Owner>(claimed, [b.sessionId]))!;
  }
  if (owned.edge !== b.edge) throw new Refused({ ok: false, reason: 'session_owned_elsewhere', owner: owned.edge });
  return owned;
}

/** The ingest over `sql` (the top-level executor, or one bound to an open transaction). */
export function createIngestStore(sql: Sql, clock: WriteClock): IngestApi {
  return {
    /** Applies one session's batch from `edge`, all or nothing. */
    async apply(b) {
      try {
        return await sql.atomic(async (q) => {
          const owned = await claimSession(q, b);
          if (readBeforeApplied(owned, b)) return skippedWhole(b);
          const next = readAfter(owned, b);
          await q.run(SQL.noteRead, [next.database_id, next.read_seq, b.sessionId]);
          const missing: string[] = [];
          const effects: IngestEffect[] = [];
          for (const e of b.entries)
            effects.push({ id: e.id, kind: e.kind, item: e.item, action: await applyEntry(q, e, b, missing) });
          // Rolled back whole: the edge sends the named contents with the same entries again.
          if (missing.length > 0)
            throw new Refused({ ok: false, reason: 'missing_blobs', missing: [...new Set(missing)] });
          if (effects.some((e) => e.action !== 'unchanged' && e.action !== 'skipped')) clock.bump(q, b.sessionId);
          return { ok: true, effects } satisfies IngestOutcome;
        });
      } catch (err) {
        if (err instanceof Refused) return err.outcome;
        throw err;
      }
    },
    /** The edge that owns a session received from one; null for this server's own sessions. */
    ownerOf: async (sessionId) => (await sql.get<{ edge: string }>(SQL.owner, [sessionId]))?.edge ?? null,
  };
}
