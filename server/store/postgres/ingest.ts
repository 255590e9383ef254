import type { EdgeContentRow, EdgeFileRow } from '../../../shared/index.ts';
import { totalsOf } from '../changes.ts';
import {
  readAfter,
  readBeforeApplied,
  same,
  skippedWhole,
  type AppliedRead,
  type IngestBatch,
  type IngestEffect,
  type IngestEntry,
  type IngestOutcome,
} from '../ingest.ts';
import { CONTENT_SIDE_COLUMNS } from '../contents.ts';
import {
  EDGE_CHANGE_COLUMNS,
  EDGE_FILE_COLUMNS,
  EDGE_MESSAGE_COLUMNS,
  EDGE_RUN_COLUMNS,
  EDGE_SESSION_COLUMNS,
  EDGE_TOOL_CALL_COLUMNS,
} from '../edge-columns.ts';
import type { IngestApi } from '../types.ts';
import { bump } from './clock.ts';
import { quoteColumn, valuesRows, type Exec, type Queryable } from './exec.ts';

/**
 * Edge batches on PostgreSQL, as `../ingest.ts` does on SQLite: one transaction per batch, rows by
 * their natural keys (applying a batch again changes nothing), an entry that refers to something
 * this database does not hold skipped, a batch for another edge's session or missing a content
 * refused whole.
 */

class Refused extends Error {
  constructor(readonly outcome: IngestOutcome) {
    super('refused');
  }
}

type Row = Record<string, unknown>;

/** `INSERT ... ON CONFLICT (key) DO UPDATE` of `key` + `cols` with positional values. */
function upsertSql(table: string, key: readonly string[], cols: readonly string[]): string {
  const all = [...key, ...cols];
  return `INSERT INTO ${table} (${all.map(quoteColumn).join(', ')}) VALUES (${all.map((_, i) => `$${i + 1}`).join(', ')})
    ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${cols.map((c) => `${quoteColumn(c)} = EXCLUDED.${quoteColumn(c)}`).join(', ')}`;
}

async function exists(q: Queryable, sql: string, values: unknown[]): Promise<boolean> {
  return (await q.query(sql, values)).rowCount! > 0;
}

async function changeSeq(q: Queryable, s: string, changeId: string): Promise<number | undefined> {
  const { rows } = await q.query<{ seq: number }>(
    'SELECT seq FROM workspace_run_changes WHERE session_id = $1 AND change_id = $2',
    [s, changeId],
  );
  return rows[0]?.seq;
}

/** Rows per multi-row statement of blobs, and their data bytes at most (one statement holds them all). */
const BLOBS_PER_INSERT = 200;
const BLOB_BYTES_PER_INSERT = 16 * 1024 * 1024;

/**
 * The blobs a contents entry names, decided in a few statements instead of a few per side: which are
 * held already, which the upload brings (written in multi-row inserts while the content budget has
 * room, in the order the rows name them), which are over the budget, and which are missing.
 */
async function keepBlobs(
  q: Queryable,
  shas: string[],
  b: IngestBatch,
  missing: string[],
): Promise<Map<string, 'kept' | 'budget' | 'missing'>> {
  const outcome = new Map<string, 'kept' | 'budget' | 'missing'>();
  const wanted = [...new Set(shas)];
  if (wanted.length === 0) return outcome;
  const { rows: held } = await q.query<{ sha256: string }>('SELECT sha256 FROM content_blobs WHERE sha256 = ANY($1)', [
    wanted,
  ]);
  for (const r of held) outcome.set(r.sha256, 'kept');
  const { rows } = await q.query<{ bytes: number }>('SELECT bytes FROM content_usage WHERE id = 1');
  let used = rows[0]!.bytes;
  const writes: { sha: string; size: number; codec: string; data: Buffer }[] = [];
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
      writes.push({ sha, size: blob.size, codec: blob.codec, data: blob.data });
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
    await q.query(
      `INSERT INTO content_blobs (sha256, size, stored_bytes, codec, data, created_at) VALUES ${valuesRows(chunk.length, 6)}
       ON CONFLICT (sha256) DO NOTHING`,
      chunk.flatMap((w) => [w.sha, w.size, w.data.length, w.codec, w.data, b.now]),
    );
    at = end;
  }
  return outcome;
}

async function applyContents(
  q: Queryable,
  s: string,
  changeId: string,
  rows: EdgeContentRow[],
  b: IngestBatch,
  missing: string[],
) {
  const seq = await changeSeq(q, s, changeId);
  if (seq === undefined) return 'skipped' as const;
  // The change's file rows and their recorded sides, read once for all rows of the entry.
  const { rows: fileRows } = await q.query<{ id: string }>(
    'SELECT id FROM workspace_run_change_files WHERE session_id = $1 AND change_id = $2',
    [s, changeId],
  );
  const files = new Set(fileRows.map((r) => r.id));
  const { rows: recordedRows } = await q.query<Row & { file_id: string }>(
    `SELECT file_id, ${CONTENT_SIDE_COLUMNS.join(', ')} FROM change_file_contents WHERE session_id = $1 AND change_id = $2`,
    [s, changeId],
  );
  const recorded = new Map(recordedRows.map((r) => [r.file_id, r]));
  const ours = rows.filter((r) => files.has(r.file_id));
  const blobs = await keepBlobs(
    q,
    ours.flatMap((r) => [r.before_sha256, r.after_sha256].filter((sha): sha is string => sha !== null)),
    b,
    missing,
  );
  // One row per file (a later row for the same file wins, as it would written one at a time).
  const byFile = new Map<string, unknown[]>();
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
    if (lacking) continue;
    const had = recorded.get(r.file_id);
    if (had && CONTENT_SIDE_COLUMNS.every((c) => had[c] === next[c])) continue;
    byFile.delete(r.file_id);
    byFile.set(r.file_id, [r.file_id, s, changeId, seq, ...CONTENT_SIDE_COLUMNS.map((c) => next[c])]);
  }
  const upserts = [...byFile.values()];
  const width = 4 + CONTENT_SIDE_COLUMNS.length;
  const perStatement = Math.floor(60_000 / width);
  for (let at = 0; at < upserts.length; at += perStatement) {
    const chunk = upserts.slice(at, at + perStatement);
    await q.query(
      `INSERT INTO change_file_contents (file_id, session_id, change_id, change_seq, ${CONTENT_SIDE_COLUMNS.join(', ')})
       VALUES ${valuesRows(chunk.length, width)}
       ON CONFLICT (file_id) DO UPDATE SET ${['session_id', 'change_id', 'change_seq', ...CONTENT_SIDE_COLUMNS].map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`,
      chunk.flat(),
    );
  }
  return upserts.length > 0 ? ('updated' as const) : ('unchanged' as const);
}

async function applyEntry(
  q: Queryable,
  e: IngestEntry,
  b: IngestBatch,
  missing: string[],
): Promise<IngestEffect['action']> {
  const s = b.sessionId;
  const row = e.row;
  const deleted = async (sql: string, values: unknown[]) =>
    (await q.query(sql, values)).rowCount! > 0 ? ('deleted' as const) : ('unchanged' as const);
  if (e.kind === 'session' || e.kind === 'session_deleted') {
    if (e.kind === 'session_deleted' || row === null) return deleted('DELETE FROM sessions WHERE id = $1', [s]);
    const had = (await q.query<Row>(`SELECT ${EDGE_SESSION_COLUMNS.join(', ')} FROM sessions WHERE id = $1`, [s]))
      .rows[0];
    if (had && same(had, row)) return 'unchanged';
    await q.query(upsertSql('sessions', ['id'], EDGE_SESSION_COLUMNS), [s, ...EDGE_SESSION_COLUMNS.map((c) => row[c])]);
    return had ? 'updated' : 'created';
  }
  if (!(await exists(q, 'SELECT 1 FROM sessions WHERE id = $1', [s]))) return 'skipped';
  switch (e.kind) {
    case 'message': {
      if (row === null) return deleted('DELETE FROM messages WHERE session_id = $1 AND id = $2', [s, e.item]);
      const had = (
        await q.query<Row>(
          `SELECT ${EDGE_MESSAGE_COLUMNS.join(', ')} FROM messages WHERE session_id = $1 AND id = $2`,
          [s, e.item],
        )
      ).rows[0];
      if (had && same(had, row)) return 'unchanged';
      await q.query(upsertSql('messages', ['session_id', 'id'], EDGE_MESSAGE_COLUMNS), [
        s,
        e.item,
        ...EDGE_MESSAGE_COLUMNS.map((c) => row[c]),
      ]);
      return had ? 'updated' : 'created';
    }
    case 'run':
    case 'tool_call': {
      const [table, id, cols] =
        e.kind === 'run'
          ? ['runs', 'run_id', EDGE_RUN_COLUMNS]
          : ['tool_calls', 'tool_call_id', EDGE_TOOL_CALL_COLUMNS];
      const key = `session_id = $1 AND ${id} = $2`;
      if (row === null) return deleted(`DELETE FROM ${table} WHERE ${key}`, [s, e.item]);
      const had = (await q.query<Row>(`SELECT ${cols.join(', ')} FROM ${table} WHERE ${key}`, [s, e.item])).rows[0];
      if (had && same(had, row)) return 'unchanged';
      await q.query(upsertSql(table, ['session_id', id], cols), [s, e.item, ...cols.map((c) => row[c])]);
      return had ? 'updated' : 'created';
    }
    case 'change': {
      if (row === null)
        return deleted('DELETE FROM workspace_run_changes WHERE session_id = $1 AND change_id = $2', [s, e.item]);
      if ((await changeSeq(q, s, e.item)) !== undefined) return 'unchanged';
      const files = row.files as EdgeFileRow[];
      await q.query(
        `INSERT INTO workspace_run_changes (change_id, session_id, ${EDGE_CHANGE_COLUMNS.join(', ')})
         VALUES (${[...EDGE_CHANGE_COLUMNS, 'a', 'b'].map((_, i) => `$${i + 1}`).join(', ')})`,
        [e.item, s, ...EDGE_CHANGE_COLUMNS.map((c) => row[c])],
      );
      // Many rows per statement (PostgreSQL takes at most 65,535 parameters in one).
      const cols = EDGE_FILE_COLUMNS.length + 2;
      const perStatement = Math.floor(60_000 / cols);
      for (let at = 0; at < files.length; at += perStatement) {
        const chunk = files.slice(at, at + perStatement);
        const values = chunk.map(
          (_, r) => `(${Array.from({ length: cols }, (_, c) => `$${r * cols + c + 1}`).join(', ')})`,
        );
        await q.query(
          `INSERT INTO workspace_run_change_files (change_id, session_id, ${EDGE_FILE_COLUMNS.map(quoteColumn).join(', ')})
           VALUES ${values.join(', ')}`,
          chunk.flatMap((f) => [e.item, s, ...EDGE_FILE_COLUMNS.map((c) => (f as unknown as Row)[c])]),
        );
      }
      // The totals are the centre's own figures over the rows it stores, as for a change stored here.
      const totals = totalsOf(files);
      await q.query(
        `UPDATE workspace_run_changes SET total_additions = $1, total_deletions = $2
         WHERE session_id = $3 AND change_id = $4`,
        [totals.total_additions, totals.total_deletions, s, e.item],
      );
      return 'created';
    }
    case 'contents':
      if (row === null) return 'unchanged';
      return applyContents(q, s, e.item, (row as { rows: EdgeContentRow[] }).rows, b, missing);
    case 'viewed': {
      const [path, pathBase64] = JSON.parse(e.item) as [string, string];
      const key = [s, path, pathBase64];
      if (row === null)
        return deleted('DELETE FROM viewed_marks WHERE session_id = $1 AND path = $2 AND path_base64 = $3', key);
      const changeId = row.change_id as string;
      const seq = await changeSeq(q, s, changeId);
      const file = await exists(
        q,
        'SELECT 1 FROM workspace_run_change_files WHERE id = $1 AND session_id = $2 AND change_id = $3',
        [row.file_id, s, changeId],
      );
      if (seq === undefined || !file) return 'skipped';
      const { rows: had } = await q.query<Row>(
        'SELECT file_id, viewed_at FROM viewed_marks WHERE session_id = $1 AND path = $2 AND path_base64 = $3',
        key,
      );
      if (had[0] && had[0].file_id === row.file_id && had[0].viewed_at === row.viewed_at) return 'unchanged';
      await q.query(
        upsertSql(
          'viewed_marks',
          ['session_id', 'path', 'path_base64'],
          ['change_id', 'change_seq', 'file_id', 'viewed_at'],
        ),
        [...key, changeId, seq, row.file_id, row.viewed_at],
      );
      return had[0] ? 'updated' : 'created';
    }
  }
}

const OWNER_SQL = 'SELECT edge, database_id, read_seq FROM edge_sessions WHERE session_id = $1 FOR UPDATE';

/**
 * The session's owner, claimed for `b.edge` when it has none, and locked until the batch's
 * transaction ends (the batches of one session are applied one at a time). Race-safe: of two
 * batches claiming one new session at once (two edges, or two replicas), one inserts and the other's
 * insert waits for it, then does nothing and reads the owner that committed; an edge that lost is
 * refused as `session_owned_elsewhere`, never failed.
 */
async function claimSession(q: Queryable, b: IngestBatch): Promise<AppliedRead> {
  type Owner = { edge: string } & AppliedRead;
  let owned = (await q.query<Owner>(OWNER_SQL, [b.sessionId])).rows[0];
  if (owned === undefined) {
    // A session this server stored itself (or one from before edges) is not taken over.
    if (await exists(q, 'SELECT 1 FROM sessions WHERE id = $1', [b.sessionId]))
      throw new Refused({ ok: false, reason: 'session_owned_elsewhere', owner: '(this server)' });
    const { rowCount } = await q.query(
      `INSERT INTO edge_sessions (session_id, edge, first_seen_at) VALUES ($1, $2, $3)
       ON CONFLICT (session_id) DO NOTHING`,
      [b.sessionId, b.edge, b.now],
    );
    if (rowCount === 1) return { database_id: null, read_seq: null };
    // Claimed meanwhile by a transaction that has committed since: a new statement sees its row.
    owned = (await q.query<Owner>(OWNER_SQL, [b.sessionId])).rows[0]!;
  }
  if (owned.edge !== b.edge) throw new Refused({ ok: false, reason: 'session_owned_elsewhere', owner: owned.edge });
  return owned;
}

export function createPgIngest(x: Exec): IngestApi {
  return {
    async apply(b) {
      try {
        return await x.atomic(async (q) => {
          const owned = await claimSession(q, b);
          if (readBeforeApplied(owned, b)) return skippedWhole(b);
          const next = readAfter(owned, b);
          await q.query('UPDATE edge_sessions SET database_id = $1, read_seq = $2 WHERE session_id = $3', [
            next.database_id,
            next.read_seq,
            b.sessionId,
          ]);
          const missing: string[] = [];
          const effects: IngestEffect[] = [];
          for (const e of b.entries)
            effects.push({
              id: e.id,
              kind: e.kind,
              item: e.item,
              action: await applyEntry(q, e, b, missing),
            });
          if (missing.length > 0)
            throw new Refused({ ok: false, reason: 'missing_blobs', missing: [...new Set(missing)] });
          if (effects.some((e) => e.action !== 'unchanged' && e.action !== 'skipped')) await bump(q, b.sessionId);
          return { ok: true, effects } satisfies IngestOutcome;
        });
      } catch (err) {
        if (err instanceof Refused) return err.outcome;
        throw err;
      }
    },
    async ownerOf(sessionId) {
      const { rows } = await x.q.query<{ edge: string }>('SELECT edge FROM edge_sessions WHERE session_id = $1', [
        sessionId,
      ]);
      return rows[0]?.edge ?? null;
    },
  };
}
