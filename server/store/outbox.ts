import type { EdgeBlob, EdgeContentRow, EdgeEntry, EdgeEntryKind, EdgeFileRow } from '../../shared/index.ts';
import { CONTENT_ROW_COLUMNS } from './contents.ts';
import type { Sql } from './sql/types.ts';
import type { OutboxApi } from './types.ts';
import {
  EDGE_CHANGE_COLUMNS,
  EDGE_FILE_COLUMNS,
  EDGE_MESSAGE_COLUMNS,
  EDGE_RUN_COLUMNS,
  EDGE_SESSION_COLUMNS,
  EDGE_TOOL_CALL_COLUMNS,
} from './edge-columns.ts';

/**
 * The edge's outbox (migration 0007). The schema's triggers note every stored result in
 * `edge_outbox` inside the transaction that stored it; here the shipper attaches the database,
 * reads a session's oldest entries with their rows as they are now, and removes entries the
 * centre acknowledged. Rows are read when sent, so an entry whose row was deleted since is sent as
 * absent (the centre deletes it too) and several entries for one row send it once.
 */

interface OutboxRow {
  seq: number;
  session_id: string;
  kind: EdgeEntryKind;
  item: string;
}

/** What one read of the outbox gives the shipper: entries to send and every seq they cover. */
export interface OutboxBatch {
  sessionId: string;
  entries: EdgeEntry[];
  /** Contents the entries reference that the centre is not known to hold. */
  blobs: EdgeBlob[];
  /**
   * The outbox's highest position ever given, when the batch was read (the rows are as of then).
   * It never goes down (positions are never reused), so a later read of a session never has less.
   */
  readSeq: number;
  /** Every outbox seq the entries cover (an entry sent once for several notes covers them all). */
  seqs: number[];
  /** The batch's estimated size on the wire (bytes). */
  bytes: number;
  /**
   * The batch is the first part of one contents entry too large for a batch (`seqs` is empty: the
   * entry stays noted, and its acknowledged contents are not sent again).
   */
  partial: boolean;
}

export interface BatchBounds {
  maxEntries: number;
  /** Entries stop being added past this (a single entry larger than it is sent alone). */
  maxBytes: number;
}

const CHANGE_COLUMNS = ['change_id', ...EDGE_CHANGE_COLUMNS].join(', ');
const FILE_COLUMNS = EDGE_FILE_COLUMNS.join(', ');

type RowEvent = 'INSERT' | 'UPDATE' | 'DELETE';
const NAMED: Record<RowEvent, string> = { INSERT: 'added', UPDATE: 'updated', DELETE: 'deleted' };

/** What each table's writes note in the outbox: the entry's kind and item, from NEW (or OLD on delete). */
const NOTED: readonly {
  table: string;
  name: string;
  on: readonly RowEvent[];
  kind: (event: RowEvent) => EdgeEntryKind;
  session: string;
  item: string;
  /** One entry per item at a time: a newer write replaces it (a new seq). */
  replace?: boolean;
}[] = [
  {
    table: 'sessions',
    name: 'session',
    on: ['INSERT', 'UPDATE', 'DELETE'],
    kind: (e) => (e === 'DELETE' ? 'session_deleted' : 'session'),
    session: 'id',
    item: 'id',
  },
  {
    table: 'messages',
    name: 'message',
    on: ['INSERT', 'UPDATE'],
    kind: () => 'message',
    session: 'session_id',
    item: 'id',
  },
  { table: 'runs', name: 'run', on: ['INSERT', 'UPDATE'], kind: () => 'run', session: 'session_id', item: 'run_id' },
  {
    table: 'tool_calls',
    name: 'tool_call',
    on: ['INSERT', 'UPDATE'],
    kind: () => 'tool_call',
    session: 'session_id',
    item: 'tool_call_id',
  },
  // A change is stored once (summary and rows together) and only ever deleted afterwards.
  {
    table: 'workspace_run_changes',
    name: 'change',
    on: ['INSERT', 'DELETE'],
    kind: () => 'change',
    session: 'session_id',
    item: 'change_id',
  },
  {
    table: 'change_file_contents',
    name: 'contents',
    on: ['INSERT', 'UPDATE'],
    kind: () => 'contents',
    session: 'session_id',
    item: 'change_id',
    replace: true,
  },
  {
    table: 'viewed_marks',
    name: 'viewed',
    on: ['INSERT', 'UPDATE', 'DELETE'],
    kind: () => 'viewed',
    session: 'session_id',
    item: 'json_array(ROW.path, ROW.path_base64)',
  },
];

/**
 * The triggers that fill the outbox, created when the database is first attached (they are schema
 * objects, so every later writer of the file, an offline `rundiff run` included, fills it too). A
 * database never attached has none and spends nothing on them. One 'contents' entry per change at a
 * time: a newer write replaces it (a new seq), so an acknowledgement never hides a later write.
 */
export const OUTBOX_TRIGGERS: readonly string[] = NOTED.flatMap((t) =>
  t.on.map((event) => {
    const row = event === 'DELETE' ? 'OLD' : 'NEW';
    const item = t.item.includes('ROW.') ? t.item.replaceAll('ROW.', `${row}.`) : `${row}.${t.item}`;
    return `CREATE TRIGGER edge_${t.name}_${NAMED[event]} AFTER ${event} ON ${t.table} BEGIN
  INSERT${t.replace ? ' OR REPLACE' : ''} INTO edge_outbox (session_id, kind, item) VALUES (${row}.${t.session}, '${t.kind(event)}', ${item});
END`;
  }),
);

const DEDUPED: ReadonlySet<EdgeEntryKind> = new Set(['session', 'message', 'run', 'tool_call', 'change']);

// Rough JSON size of a value, for batch bounds (base64 data dominates when present).
const sizeOf = (v: unknown): number => JSON.stringify(v).length;

/**
 * The first part of a contents entry over `maxBytes`: its contents in order while they fit (one at
 * least, whatever its size), and the rows that need no other content still to be sent.
 */
function partOfContents(
  entry: EdgeEntry,
  blobs: EdgeBlob[],
  maxBytes: number,
): { entry: EdgeEntry; blobs: EdgeBlob[]; bytes: number } {
  const taken: EdgeBlob[] = [];
  let bytes = 0;
  for (const b of blobs) {
    const size = b.data.length + 100;
    if (taken.length > 0 && bytes + size > maxBytes) break;
    taken.push(b);
    bytes += size;
  }
  const later = new Set(blobs.slice(taken.length).map((b) => b.sha256));
  const row = entry.row as { change_id: string; rows: EdgeContentRow[] };
  const rows = row.rows.filter((r) => !later.has(r.before_sha256 ?? '') && !later.has(r.after_sha256 ?? ''));
  const part: EdgeEntry = { ...entry, row: { ...row, rows } };
  return { entry: part, blobs: taken, bytes: bytes + sizeOf(part) };
}

const SQL = {
  state: 'SELECT enabled, database_id FROM edge_state WHERE id = 1',
  enable: 'UPDATE edge_state SET enabled = 1 WHERE id = 1',
  lastSent: 'SELECT last_sent_at FROM edge_state WHERE id = 1',
  noteLastSent: 'UPDATE edge_state SET last_sent_at = ? WHERE id = 1',
  // Attaching a database that already holds history: its rows are noted in the order a live
  // writer would have noted them (a session before its rows, a change before its contents).
  backfill: [
    `INSERT INTO edge_outbox (session_id, kind, item) SELECT id, 'session', id FROM sessions ORDER BY created_at, id`,
    `INSERT INTO edge_outbox (session_id, kind, item) SELECT session_id, 'message', id FROM messages ORDER BY seq`,
    `INSERT INTO edge_outbox (session_id, kind, item) SELECT session_id, 'run', run_id FROM runs ORDER BY seq`,
    `INSERT INTO edge_outbox (session_id, kind, item)
       SELECT session_id, 'tool_call', tool_call_id FROM tool_calls ORDER BY seq`,
    `INSERT INTO edge_outbox (session_id, kind, item)
       SELECT session_id, 'change', change_id FROM workspace_run_changes ORDER BY seq`,
    `INSERT OR REPLACE INTO edge_outbox (session_id, kind, item)
       SELECT DISTINCT c.session_id, 'contents', c.change_id FROM change_file_contents c
       JOIN workspace_run_changes w ON w.session_id = c.session_id AND w.change_id = c.change_id ORDER BY w.seq`,
    `INSERT INTO edge_outbox (session_id, kind, item)
       SELECT session_id, 'viewed', json_array(path, path_base64) FROM viewed_marks ORDER BY viewed_at`,
  ],
  counts: 'SELECT COUNT(*) AS entries, COUNT(DISTINCT session_id) AS sessions, MIN(seq) AS oldest FROM edge_outbox',
  // Sessions with entries, the one waiting longest first.
  pendingSessions: 'SELECT session_id FROM edge_outbox GROUP BY session_id ORDER BY MIN(seq) LIMIT ?',
  oldestOf: 'SELECT seq, session_id, kind, item FROM edge_outbox WHERE session_id = ? ORDER BY seq LIMIT ?',
  sessionRow: `SELECT id, ${EDGE_SESSION_COLUMNS.join(', ')} FROM sessions WHERE id = ?`,
  messageRow: `SELECT id, ${EDGE_MESSAGE_COLUMNS.join(', ')} FROM messages WHERE session_id = ? AND id = ?`,
  runRow: `SELECT run_id, ${EDGE_RUN_COLUMNS.join(', ')} FROM runs WHERE session_id = ? AND run_id = ?`,
  toolCallRow: `SELECT tool_call_id, ${EDGE_TOOL_CALL_COLUMNS.join(', ')} FROM tool_calls
     WHERE session_id = ? AND tool_call_id = ?`,
  changeRow: `SELECT ${CHANGE_COLUMNS} FROM workspace_run_changes WHERE session_id = ? AND change_id = ?`,
  changeStored: 'SELECT 1 AS one FROM workspace_run_changes WHERE session_id = ? AND change_id = ?',
  fileRows: `SELECT ${FILE_COLUMNS} FROM workspace_run_change_files WHERE session_id = ? AND change_id = ? ORDER BY ord`,
  contentRows: `SELECT ${CONTENT_ROW_COLUMNS} FROM change_file_contents WHERE session_id = ? AND change_id = ?
     ORDER BY file_id`,
  viewedRow: `SELECT path, path_base64, change_id, file_id, viewed_at FROM viewed_marks
     WHERE session_id = ? AND path = ? AND path_base64 = ?`,
  blobSent: 'SELECT 1 AS one FROM edge_blobs_sent WHERE sha256 = ?',
  blobRow: 'SELECT size, codec, data FROM content_blobs WHERE sha256 = ?',
  // AUTOINCREMENT's high-water mark: kept when the entries holding it are removed.
  highestSeq: "SELECT COALESCE(MAX(seq), 0) AS seq FROM sqlite_sequence WHERE name = 'edge_outbox'",
  removeEntry: 'DELETE FROM edge_outbox WHERE seq = ?',
  noteSent: 'INSERT OR IGNORE INTO edge_blobs_sent (sha256) VALUES (?)',
  forgetSent: 'DELETE FROM edge_blobs_sent WHERE sha256 = ?',
};

type Row = Record<string, unknown>;

/** The row an entry describes as it is now; null when it is gone. */
async function rowOf(q: Sql, sessionId: string, kind: EdgeEntryKind, item: string): Promise<EdgeEntry['row']> {
  switch (kind) {
    case 'session':
      return (await q.get<Row>(SQL.sessionRow, [item])) ?? null;
    case 'session_deleted':
      return null;
    case 'message':
      return (await q.get<Row>(SQL.messageRow, [sessionId, item])) ?? null;
    case 'run':
      return (await q.get<Row>(SQL.runRow, [sessionId, item])) ?? null;
    case 'tool_call':
      return (await q.get<Row>(SQL.toolCallRow, [sessionId, item])) ?? null;
    case 'change': {
      const summary = await q.get<Row>(SQL.changeRow, [sessionId, item]);
      return summary ? { ...summary, files: await q.all<EdgeFileRow>(SQL.fileRows, [sessionId, item]) } : null;
    }
    case 'contents': {
      const rows = await q.all<EdgeContentRow>(SQL.contentRows, [sessionId, item]);
      return rows.length > 0 ? { change_id: item, rows } : null;
    }
    case 'viewed': {
      const [path, pathBase64] = JSON.parse(item) as [string, string];
      return (await q.get<Row>(SQL.viewedRow, [sessionId, path, pathBase64])) ?? null;
    }
  }
}

/** The session's oldest entries within the bounds, as of one consistent read. */
async function readIn(q: Sql, sessionId: string, bounds: BatchBounds): Promise<OutboxBatch> {
  const notes = await q.all<OutboxRow>(SQL.oldestOf, [sessionId, bounds.maxEntries]);
  const readSeq = (await q.get<{ seq: number }>(SQL.highestSeq))!.seq;
  const entries: EdgeEntry[] = [];
  const blobs: EdgeBlob[] = [];
  const seqs: number[] = [];
  const wanted = new Set<string>();
  // A row noted again before its first note is sent is sent once, at its first note (a session
  // must arrive before its rows), with what it is now. Not across a session deletion (the rows
  // noted after it belong to a new session of that id), and not for rows that refer to other
  // rows' later notes (viewed marks, contents): those are sent at every note.
  const sent = new Set<string>();
  let bytes = 0;
  let pendingSeqs: number[] = [];
  for (const n of notes) {
    pendingSeqs.push(n.seq);
    if (n.kind === 'session_deleted') sent.clear();
    if (DEDUPED.has(n.kind)) {
      const key = `${n.kind}\u0000${n.item}`;
      if (sent.has(key)) {
        seqs.push(...pendingSeqs);
        pendingSeqs = [];
        continue;
      }
      sent.add(key);
    }
    const entry: EdgeEntry = { id: n.seq, kind: n.kind, item: n.item, row: await rowOf(q, sessionId, n.kind, n.item) };
    // A finished run or tool call whose change is stored: the centre holds its terminal event
    // until that change (noted after it, perhaps in a later batch) is applied.
    const r = entry.row;
    if ((n.kind === 'run' || n.kind === 'tool_call') && r !== null && r.status !== 'running')
      if ((await q.get(SQL.changeStored, [sessionId, r.change_id as string])) !== undefined) entry.change_stored = true;
    const entryBlobs: EdgeBlob[] = [];
    if (n.kind === 'contents' && entry.row !== null) {
      for (const r of (entry.row as { rows: EdgeContentRow[] }).rows) {
        for (const sha of [r.before_sha256, r.after_sha256]) {
          if (sha === null || wanted.has(sha) || (await q.get(SQL.blobSent, [sha])) !== undefined) continue;
          const b = await q.get<{ size: number; codec: 'raw' | 'deflate'; data: Buffer }>(SQL.blobRow, [sha]);
          if (!b) continue;
          wanted.add(sha);
          entryBlobs.push({ sha256: sha, size: b.size, codec: b.codec, data: b.data.toString('base64') });
        }
      }
    }
    const size = sizeOf(entry) + entryBlobs.reduce((s, b) => s + b.data.length + 100, 0);
    if (entries.length === 0 && size > bounds.maxBytes && entryBlobs.length > 1) {
      // Contents larger than a batch: this batch carries the rows whose contents fit, and the
      // entry stays noted; once acknowledged, those contents count as held, so the next read
      // of the entry carries the next part, until it fits whole and is acknowledged.
      const part = partOfContents(entry, entryBlobs, bounds.maxBytes);
      return {
        sessionId,
        entries: [part.entry],
        blobs: part.blobs,
        seqs: [],
        bytes: part.bytes,
        partial: true,
        readSeq,
      };
    }
    if (entries.length > 0 && bytes + size > bounds.maxBytes) break;
    bytes += size;
    entries.push(entry);
    blobs.push(...entryBlobs);
    seqs.push(...pendingSeqs);
    pendingSeqs = [];
  }
  return { sessionId, entries, blobs, seqs, bytes, partial: false, readSeq };
}

/** The edge's outbox over `sql`, a SQLite executor (the triggers are SQLite's). */
export function createOutboxStore(sql: Sql): OutboxApi {
  const state = async (q: Sql) => (await q.get<{ enabled: number; database_id: string }>(SQL.state))!;
  return {
    /** Starts noting stored results (and notes the history already stored); true the first time. */
    attach: () =>
      sql.atomic(async (q) => {
        if ((await state(q)).enabled === 1) return false;
        // Backfill first: the triggers do not exist yet, so nothing is noted twice.
        for (const s of SQL.backfill) await q.run(s);
        for (const t of OUTBOX_TRIGGERS) await q.run(t);
        await q.run(SQL.enable);
        return true;
      }),
    attached: async () => (await state(sql)).enabled === 1,
    /** This database's id (sent with every batch). */
    databaseId: async () => (await state(sql)).database_id,
    status: () =>
      sql.read(async (q) => {
        const c = (await q.get<{ entries: number; sessions: number }>(SQL.counts))!;
        const last = await q.get<{ last_sent_at: number | null }>(SQL.lastSent);
        return { pending_entries: c.entries, pending_sessions: c.sessions, last_sent_at: last?.last_sent_at ?? null };
      }),
    /** Up to `limit` sessions with entries, the one waiting longest first. */
    pendingSessions: async (limit) =>
      (await sql.all<{ session_id: string }>(SQL.pendingSessions, [limit])).map((r) => r.session_id),
    /** The session's oldest entries within the bounds, read in one transaction. */
    read: (sessionId, bounds) => sql.atomic((q) => readIn(q, sessionId, bounds)),
    /** Removes acknowledged entries and remembers the contents the centre now holds (and `at`, when it acknowledged). */
    acknowledge: (seqs, blobs, at) =>
      sql.atomic(async (q) => {
        for (const s of seqs) await q.run(SQL.removeEntry, [s]);
        for (const b of blobs) await q.run(SQL.noteSent, [b]);
        if (at !== undefined) await q.run(SQL.noteLastSent, [at]);
      }),
    /** The centre said it lacks these contents: they are sent again with the next batch. */
    forgetBlobs: (shas) =>
      sql.atomic(async (q) => {
        for (const s of shas) await q.run(SQL.forgetSent, [s]);
      }),
  };
}
