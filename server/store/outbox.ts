import type { EdgeBlob, EdgeContentRow, EdgeEntry, EdgeEntryKind, EdgeFileRow } from '../../shared/index.ts';
import { CONTENT_ROW_COLUMNS } from './contents.ts';
import type { Db } from './database.ts';
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
export const OUTBOX_TRIGGERS = NOTED.flatMap((t) =>
  t.on.map((event) => {
    const row = event === 'DELETE' ? 'OLD' : 'NEW';
    const item = t.item.includes('ROW.') ? t.item.replaceAll('ROW.', `${row}.`) : `${row}.${t.item}`;
    return `CREATE TRIGGER edge_${t.name}_${NAMED[event]} AFTER ${event} ON ${t.table} BEGIN
  INSERT${t.replace ? ' OR REPLACE' : ''} INTO edge_outbox (session_id, kind, item) VALUES (${row}.${t.session}, '${t.kind(event)}', ${item});
END;`;
  }),
).join('\n');

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

/** Synchronous; the store binds it as `OutboxApi` (`sqlite-store.ts`). */
export function createOutboxStore(db: Db) {
  const state = db.prepare<[], { enabled: number; database_id: string }>(
    'SELECT enabled, database_id FROM edge_state WHERE id = 1',
  );
  const enable = db.prepare('UPDATE edge_state SET enabled = 1 WHERE id = 1');
  const lastSent = db.prepare<[], number | null>('SELECT last_sent_at FROM edge_state WHERE id = 1').pluck();
  const noteLastSent = db.prepare<[number]>('UPDATE edge_state SET last_sent_at = ? WHERE id = 1');
  // Attaching a database that already holds history: its rows are noted in the order a live
  // writer would have noted them (a session before its rows, a change before its contents).
  const backfill = [
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
  ].map((sql) => db.prepare(sql));
  const counts = db.prepare<[], { entries: number; sessions: number; oldest: number | null }>(
    'SELECT COUNT(*) AS entries, COUNT(DISTINCT session_id) AS sessions, MIN(seq) AS oldest FROM edge_outbox',
  );
  // Sessions with entries, the one waiting longest first.
  const pendingSessions = db
    .prepare<[number], string>('SELECT session_id FROM edge_outbox GROUP BY session_id ORDER BY MIN(seq) LIMIT ?')
    .pluck();
  const oldestOf = db.prepare<[string, number], OutboxRow>(
    'SELECT seq, session_id, kind, item FROM edge_outbox WHERE session_id = ? ORDER BY seq LIMIT ?',
  );
  const sessionRow = db.prepare<[string], Record<string, unknown>>(
    `SELECT id, ${EDGE_SESSION_COLUMNS.join(', ')} FROM sessions WHERE id = ?`,
  );
  const messageRow = db.prepare<[string, string], Record<string, unknown>>(
    `SELECT id, ${EDGE_MESSAGE_COLUMNS.join(', ')} FROM messages WHERE session_id = ? AND id = ?`,
  );
  const runRow = db.prepare<[string, string], Record<string, unknown>>(
    `SELECT run_id, ${EDGE_RUN_COLUMNS.join(', ')} FROM runs WHERE session_id = ? AND run_id = ?`,
  );
  const toolCallRow = db.prepare<[string, string], Record<string, unknown>>(
    `SELECT tool_call_id, ${EDGE_TOOL_CALL_COLUMNS.join(', ')} FROM tool_calls WHERE session_id = ? AND tool_call_id = ?`,
  );
  const changeRow = db.prepare<[string, string], Record<string, unknown>>(
    `SELECT ${CHANGE_COLUMNS} FROM workspace_run_changes WHERE session_id = ? AND change_id = ?`,
  );
  const changeStored = db
    .prepare<[string, string], number>('SELECT 1 FROM workspace_run_changes WHERE session_id = ? AND change_id = ?')
    .pluck();
  const fileRows = db.prepare<[string, string], EdgeFileRow>(
    `SELECT ${FILE_COLUMNS} FROM workspace_run_change_files WHERE session_id = ? AND change_id = ? ORDER BY ord`,
  );
  const contentRows = db.prepare<[string, string], EdgeContentRow>(
    `SELECT ${CONTENT_ROW_COLUMNS} FROM change_file_contents WHERE session_id = ? AND change_id = ? ORDER BY file_id`,
  );
  const viewedRow = db.prepare<[string, string, string], Record<string, unknown>>(
    `SELECT path, path_base64, change_id, file_id, viewed_at FROM viewed_marks
     WHERE session_id = ? AND path = ? AND path_base64 = ?`,
  );
  const blobSent = db.prepare<[string], number>('SELECT 1 FROM edge_blobs_sent WHERE sha256 = ?').pluck();
  const blobRow = db.prepare<[string], { size: number; codec: 'raw' | 'deflate'; data: Buffer }>(
    'SELECT size, codec, data FROM content_blobs WHERE sha256 = ?',
  );
  // AUTOINCREMENT's high-water mark: kept when the entries holding it are removed.
  const highestSeq = db
    .prepare<[], number>("SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'edge_outbox'")
    .pluck();
  const removeEntry = db.prepare<[number]>('DELETE FROM edge_outbox WHERE seq = ?');
  const noteSent = db.prepare<[string]>('INSERT OR IGNORE INTO edge_blobs_sent (sha256) VALUES (?)');
  const forgetSent = db.prepare<[string]>('DELETE FROM edge_blobs_sent WHERE sha256 = ?');

  /** The row an entry describes as it is now; null when it is gone. */
  function rowOf(sessionId: string, kind: EdgeEntryKind, item: string): EdgeEntry['row'] {
    switch (kind) {
      case 'session':
        return sessionRow.get(item) ?? null;
      case 'session_deleted':
        return null;
      case 'message':
        return messageRow.get(sessionId, item) ?? null;
      case 'run':
        return runRow.get(sessionId, item) ?? null;
      case 'tool_call':
        return toolCallRow.get(sessionId, item) ?? null;
      case 'change': {
        const summary = changeRow.get(sessionId, item);
        return summary ? { ...summary, files: fileRows.all(sessionId, item) } : null;
      }
      case 'contents': {
        const rows = contentRows.all(sessionId, item);
        return rows.length > 0 ? { change_id: item, rows } : null;
      }
      case 'viewed': {
        const [path, pathBase64] = JSON.parse(item) as [string, string];
        return viewedRow.get(sessionId, path, pathBase64) ?? null;
      }
    }
  }

  const read = db.transaction((sessionId: string, bounds: BatchBounds): OutboxBatch => {
    const notes = oldestOf.all(sessionId, bounds.maxEntries);
    const readSeq = highestSeq.get()!;
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
      const entry: EdgeEntry = { id: n.seq, kind: n.kind, item: n.item, row: rowOf(sessionId, n.kind, n.item) };
      // A finished run or tool call whose change is stored: the centre holds its terminal event
      // until that change (noted after it, perhaps in a later batch) is applied.
      const r = entry.row;
      if ((n.kind === 'run' || n.kind === 'tool_call') && r !== null && r.status !== 'running')
        if (changeStored.get(sessionId, r.change_id as string) !== undefined) entry.change_stored = true;
      const entryBlobs: EdgeBlob[] = [];
      if (n.kind === 'contents' && entry.row !== null) {
        for (const r of (entry.row as { rows: EdgeContentRow[] }).rows) {
          for (const sha of [r.before_sha256, r.after_sha256]) {
            if (sha === null || wanted.has(sha) || blobSent.get(sha) !== undefined) continue;
            const b = blobRow.get(sha);
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
  });

  const ack = db.transaction((seqs: readonly number[], blobs: readonly string[], at: number | undefined) => {
    for (const s of seqs) removeEntry.run(s);
    for (const b of blobs) noteSent.run(b);
    if (at !== undefined) noteLastSent.run(at);
  });

  return {
    /** Starts noting stored results (and notes the history already stored); true the first time. */
    attach(): boolean {
      return db.transaction(() => {
        if (state.get()!.enabled === 1) return false;
        // Backfill first: the triggers do not exist yet, so nothing is noted twice.
        for (const s of backfill) s.run();
        db.exec(OUTBOX_TRIGGERS);
        enable.run();
        return true;
      })();
    },
    attached(): boolean {
      return state.get()!.enabled === 1;
    },
    /** This database's id (sent with every batch). */
    databaseId(): string {
      return state.get()!.database_id;
    },
    status(): { pending_entries: number; pending_sessions: number; last_sent_at: number | null } {
      const c = counts.get()!;
      return { pending_entries: c.entries, pending_sessions: c.sessions, last_sent_at: lastSent.get() ?? null };
    },
    /** Up to `limit` sessions with entries, the one waiting longest first. */
    pendingSessions(limit: number): string[] {
      return pendingSessions.all(limit);
    },
    /** The session's oldest entries within the bounds, read in one transaction. */
    read(sessionId: string, bounds: BatchBounds): OutboxBatch {
      return read(sessionId, bounds);
    },
    /** Removes acknowledged entries and remembers the contents the centre now holds (and `at`, when it acknowledged). */
    acknowledge(seqs: readonly number[], blobs: readonly string[], at?: number): void {
      ack(seqs, blobs, at);
    },
    /** The centre said it lacks these contents: they are sent again with the next batch. */
    forgetBlobs(shas: readonly string[]): void {
      db.transaction(() => {
        for (const s of shas) forgetSent.run(s);
      })();
    },
  };
}
