import type { EdgeContentRow, EdgeFileRow } from '../../../shared/index.ts';
import { same, type IngestBatch, type IngestEffect, type IngestEntry, type IngestOutcome } from '../ingest.ts';
import { CHANGE_FIELDS } from '../changes.ts';
import type { IngestApi } from '../types.ts';
import { bump } from './clock.ts';
import type { Exec, Queryable } from './exec.ts';

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

const SESSION_COLS = ['title', 'workspace', 'created_at', 'updated_at'];
const MESSAGE_COLS = ['role', 'content', 'run_id', 'tool_call_id', 'created_at'];
const RUN_COLS = [
  'status',
  'source',
  'workspace',
  'started_at',
  'finished_at',
  'error',
  'change_id',
  'tracking',
  'reason',
];
const TOOL_COLS = [
  'run_id',
  'name',
  'status',
  'workspace',
  'started_at',
  'finished_at',
  'error',
  'change_id',
  'tracking',
  'reason',
];
/** A change's columns but its key (`change_id`, `session_id`), which an ingested entry names itself. */
const CHANGE_COLS = CHANGE_FIELDS.filter((c) => c !== 'change_id' && c !== 'session_id');
const FILE_COLS = [
  'id',
  'ord',
  'path',
  'old_path',
  'path_base64',
  'old_path_base64',
  'change_type',
  'additions',
  'deletions',
  'size_before',
  'size_after',
  'patch',
  'patch_bytes',
  'truncated',
  'binary',
  'omitted_reason',
  'created_at',
];
const CONTENT_COLS = ['before_mode', 'before_sha256', 'before_reason', 'after_mode', 'after_sha256', 'after_reason'];

const quote = (c: string) => (c === 'binary' ? '"binary"' : c);

/** `INSERT ... ON CONFLICT (key) DO UPDATE` of `key` + `cols` with positional values. */
function upsertSql(table: string, key: string[], cols: string[]): string {
  const all = [...key, ...cols];
  return `INSERT INTO ${table} (${all.map(quote).join(', ')}) VALUES (${all.map((_, i) => `$${i + 1}`).join(', ')})
    ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${cols.map((c) => `${quote(c)} = EXCLUDED.${quote(c)}`).join(', ')}`;
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

async function keepBlob(
  q: Queryable,
  sha: string,
  b: IngestBatch,
  missing: string[],
): Promise<'kept' | 'budget' | 'missing'> {
  if (await exists(q, 'SELECT 1 FROM content_blobs WHERE sha256 = $1', [sha])) return 'kept';
  const blob = b.blobs.get(sha);
  if (!blob) {
    missing.push(sha);
    return 'missing';
  }
  const { rows } = await q.query<{ bytes: number }>('SELECT bytes FROM content_usage WHERE id = 1');
  if (rows[0]!.bytes + blob.data.length > b.contentMaxBytes) return 'budget';
  await q.query(
    `INSERT INTO content_blobs (sha256, size, stored_bytes, codec, data, created_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (sha256) DO NOTHING`,
    [sha, blob.size, blob.data.length, blob.codec, blob.data, b.now],
  );
  return 'kept';
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
  let changed = false;
  // The change's file rows and their recorded sides, read once for all rows of the entry.
  const { rows: fileRows } = await q.query<{ id: string }>(
    'SELECT id FROM workspace_run_change_files WHERE session_id = $1 AND change_id = $2',
    [s, changeId],
  );
  const files = new Set(fileRows.map((r) => r.id));
  const { rows: recordedRows } = await q.query<Row & { file_id: string }>(
    `SELECT file_id, ${CONTENT_COLS.join(', ')} FROM change_file_contents WHERE session_id = $1 AND change_id = $2`,
    [s, changeId],
  );
  const recorded = new Map(recordedRows.map((r) => [r.file_id, r]));
  for (const r of rows) {
    if (!files.has(r.file_id)) continue;
    const next: Row = { ...r };
    let lacking = false;
    for (const side of ['before', 'after'] as const) {
      const sha = r[`${side}_sha256`];
      if (sha === null) continue;
      const kept = await keepBlob(q, sha, b, missing);
      if (kept === 'missing') lacking = true;
      if (kept === 'budget') {
        next[`${side}_sha256`] = null;
        next[`${side}_reason`] = 'budget';
      }
    }
    if (lacking) continue;
    const had = recorded.get(r.file_id);
    if (had && CONTENT_COLS.every((c) => had[c] === next[c])) continue;
    await q.query(
      upsertSql('change_file_contents', ['file_id'], ['session_id', 'change_id', 'change_seq', ...CONTENT_COLS]),
      [r.file_id, s, changeId, seq, ...CONTENT_COLS.map((c) => next[c])],
    );
    changed = true;
  }
  return changed ? ('updated' as const) : ('unchanged' as const);
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
    const had = (await q.query<Row>(`SELECT ${SESSION_COLS.join(', ')} FROM sessions WHERE id = $1`, [s])).rows[0];
    if (had && same(had, row)) return 'unchanged';
    await q.query(upsertSql('sessions', ['id'], SESSION_COLS), [s, ...SESSION_COLS.map((c) => row[c])]);
    return had ? 'updated' : 'created';
  }
  if (!(await exists(q, 'SELECT 1 FROM sessions WHERE id = $1', [s]))) return 'skipped';
  switch (e.kind) {
    case 'message': {
      if (row === null) return deleted('DELETE FROM messages WHERE session_id = $1 AND id = $2', [s, e.item]);
      const had = (
        await q.query<Row>(`SELECT ${MESSAGE_COLS.join(', ')} FROM messages WHERE session_id = $1 AND id = $2`, [
          s,
          e.item,
        ])
      ).rows[0];
      if (had && same(had, row)) return 'unchanged';
      await q.query(upsertSql('messages', ['session_id', 'id'], MESSAGE_COLS), [
        s,
        e.item,
        ...MESSAGE_COLS.map((c) => row[c]),
      ]);
      return had ? 'updated' : 'created';
    }
    case 'run':
    case 'tool_call': {
      const [table, id, cols] =
        e.kind === 'run' ? ['runs', 'run_id', RUN_COLS] : ['tool_calls', 'tool_call_id', TOOL_COLS];
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
        `INSERT INTO workspace_run_changes (change_id, session_id, ${CHANGE_COLS.join(', ')})
         VALUES (${[...CHANGE_COLS, 'a', 'b'].map((_, i) => `$${i + 1}`).join(', ')})`,
        [e.item, s, ...CHANGE_COLS.map((c) => row[c])],
      );
      // Many rows per statement (PostgreSQL takes at most 65,535 parameters in one).
      const cols = FILE_COLS.length + 2;
      const perStatement = Math.floor(60_000 / cols);
      for (let at = 0; at < files.length; at += perStatement) {
        const chunk = files.slice(at, at + perStatement);
        const values = chunk.map(
          (_, r) => `(${Array.from({ length: cols }, (_, c) => `$${r * cols + c + 1}`).join(', ')})`,
        );
        await q.query(
          `INSERT INTO workspace_run_change_files (change_id, session_id, ${FILE_COLS.map(quote).join(', ')})
           VALUES ${values.join(', ')}`,
          chunk.flatMap((f) => [e.item, s, ...FILE_COLS.map((c) => (f as unknown as Row)[c])]),
        );
      }
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

export function createPgIngest(x: Exec): IngestApi {
  return {
    async apply(b) {
      try {
        return await x.atomic(async (q) => {
          // Two first batches of one session racing on two replicas: one insert fails, that edge retries.
          const { rows } = await q.query<{ edge: string }>(
            'SELECT edge FROM edge_sessions WHERE session_id = $1 FOR UPDATE',
            [b.sessionId],
          );
          const owned = rows[0]?.edge;
          if (owned !== undefined && owned !== b.edge)
            throw new Refused({ ok: false, reason: 'session_owned_elsewhere', owner: owned });
          if (owned === undefined) {
            if (await exists(q, 'SELECT 1 FROM sessions WHERE id = $1', [b.sessionId]))
              throw new Refused({ ok: false, reason: 'session_owned_elsewhere', owner: '(this server)' });
            await q.query('INSERT INTO edge_sessions (session_id, edge, first_seen_at) VALUES ($1, $2, $3)', [
              b.sessionId,
              b.edge,
              b.now,
            ]);
          }
          const missing: string[] = [];
          const effects: IngestEffect[] = [];
          for (const e of b.entries)
            effects.push({
              id: e.id,
              kind: e.kind,
              item: e.item,
              action: await applyEntry(q, e, b, missing),
            } as IngestEffect);
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
