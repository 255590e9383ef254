import { randomUUID } from 'node:crypto';
import {
  FILE_SUMMARY_FIELDS,
  FIRST_FILES_PAGE,
  type ChangeFilesPage,
  type ChangeSummary,
  type FileSummary,
  type TruncatedReason,
} from '../../../shared/index.ts';
import {
  CHANGE_FIELDS,
  CHANGE_TOTAL_COLUMNS,
  FILE_INSERT_COLUMNS,
  FILE_SUMMARY_COLUMN_LIST,
  keptTotals,
  totalsOf,
  type NewChange,
} from '../changes.ts';
import type { ChangesApi } from '../types.ts';
import { bump } from './clock.ts';
import { quoteColumn, valuesRows, type Exec, type Queryable } from './exec.ts';

const CHANGE_COLUMNS = [...CHANGE_FIELDS, ...CHANGE_TOTAL_COLUMNS].join(', ');
type Totals = Pick<ChangeSummary, 'total_additions' | 'total_deletions'>;
const FILE_SUMMARY_COLUMNS = FILE_SUMMARY_COLUMN_LIST.map(quoteColumn).join(', ');
// Rows per INSERT: few round trips for a large change, far below the 65,535 parameters a statement takes.
const FILES_PER_INSERT = 500;

type Row = Record<string, unknown>;

function toFile(r: Row): FileSummary {
  const f: Record<string, unknown> = { id: r.id };
  for (const k of FILE_SUMMARY_FIELDS) f[k] = k === 'binary' || k === 'truncated' ? r[k] === 1 : r[k];
  if (r.path_base64 !== null) f.path_base64 = r.path_base64;
  if (r.old_path_base64 !== null) f.old_path_base64 = r.old_path_base64;
  return f as unknown as FileSummary;
}

function pageOf(rows: Row[], total: number, limit: number): ChangeFilesPage {
  const files = rows.slice(0, limit).map(toFile);
  const last = rows[Math.min(rows.length, limit) - 1];
  const more = rows.length > limit;
  return { files, files_total: total, next_file_cursor: more && last ? String(last.ord) : null };
}

function asFirstPage(page: ChangeFilesPage): Pick<ChangeSummary, 'files' | 'files_total' | 'next_file_cursor'> {
  if (page.next_file_cursor === null) return { files: page.files };
  return { files: page.files, files_total: page.files_total, next_file_cursor: page.next_file_cursor };
}

function toChange(r: Row, page: ChangeFilesPage, totals: Totals): ChangeSummary {
  const c: Record<string, unknown> = {};
  for (const k of CHANGE_FIELDS) c[k] = k === 'truncated' || k === 'overlapping' ? r[k] === 1 : r[k];
  c.truncated_reasons = JSON.parse(r.truncated_reasons as string) as TruncatedReason[];
  return { ...(c as unknown as NewChange), ...totals, ...asFirstPage(page) };
}

/** The totals a change's row keeps, or (a change stored by an older release) the sums of its rows. */
async function storedTotals(q: Queryable, r: Row): Promise<Totals> {
  const kept = keptTotals(r);
  if (kept) return kept;
  const { rows } = await q.query<{ a: string | null; d: string | null }>(
    `SELECT SUM(additions) AS a, SUM(deletions) AS d FROM workspace_run_change_files
     WHERE session_id = $1 AND change_id = $2`,
    [r.session_id, r.change_id],
  );
  return { total_additions: Number(rows[0]?.a ?? 0), total_deletions: Number(rows[0]?.d ?? 0) };
}

export function createPgChanges(x: Exec): ChangesApi {
  async function page(q: Queryable, sessionId: string, changeId: string, after: number, limit: number) {
    const { rows } = await q.query(
      `SELECT ${FILE_SUMMARY_COLUMNS}, ord FROM workspace_run_change_files
       WHERE session_id = $1 AND change_id = $2 AND ord > $3 ORDER BY ord LIMIT $4`,
      [sessionId, changeId, after, limit + 1],
    );
    // Positions run 0..n-1, so the last one counts the rows (one index probe).
    const total = await q.query<{ n: number | null }>(
      'SELECT MAX(ord) + 1 AS n FROM workspace_run_change_files WHERE session_id = $1 AND change_id = $2',
      [sessionId, changeId],
    );
    return pageOf(rows, total.rows[0]?.n ?? 0, limit);
  }

  const listKeyed = (sessionId: string) => x.read((q) => listKeyedIn(q, sessionId));

  async function listKeyedIn(q: Queryable, sessionId: string) {
    const files = await q.query(
      `SELECT ${FILE_SUMMARY_COLUMNS}, ord FROM workspace_run_change_files WHERE session_id = $1 AND ord <= $2
       ORDER BY change_id, ord`,
      [sessionId, FIRST_FILES_PAGE],
    );
    const byChange = new Map<string, Row[]>();
    for (const row of files.rows) {
      const id = row.change_id as string;
      let list = byChange.get(id);
      if (!list) byChange.set(id, (list = []));
      list.push(row);
    }
    const counts = await q.query<{ change_id: string; n: number }>(
      'SELECT change_id, COUNT(*) AS n FROM workspace_run_change_files WHERE session_id = $1 GROUP BY change_id',
      [sessionId],
    );
    const totals = new Map(counts.rows.map((c) => [c.change_id, c.n]));
    const changes = await q.query(
      `SELECT seq, ${CHANGE_COLUMNS} FROM workspace_run_changes WHERE session_id = $1 ORDER BY created_at, seq`,
      [sessionId],
    );
    const out: { seq: number; change: ChangeSummary }[] = [];
    for (const r of changes.rows)
      out.push({
        seq: r.seq as number,
        change: toChange(
          r,
          pageOf(byChange.get(r.change_id as string) ?? [], totals.get(r.change_id as string) ?? 0, FIRST_FILES_PAGE),
          await storedTotals(q, r),
        ),
      });
    return out;
  }

  async function exists(q: Queryable, sessionId: string, changeId: string) {
    const { rowCount } = await q.query('SELECT 1 FROM workspace_run_changes WHERE session_id = $1 AND change_id = $2', [
      sessionId,
      changeId,
    ]);
    return (rowCount ?? 0) > 0;
  }

  return {
    insert: (change, files, maxChangesPerSession) =>
      x.atomic(async (q) => {
        await bump(q, change.session_id, 'changes');
        const row = change as unknown as Row;
        const totals = totalsOf(files);
        await q.query(
          `INSERT INTO workspace_run_changes (${CHANGE_COLUMNS})
           VALUES ${valuesRows(1, CHANGE_FIELDS.length + CHANGE_TOTAL_COLUMNS.length)}`,
          [
            ...CHANGE_FIELDS.map((k) =>
              k === 'truncated' || k === 'overlapping'
                ? row[k]
                  ? 1
                  : 0
                : k === 'truncated_reasons'
                  ? JSON.stringify(change.truncated_reasons)
                  : row[k],
            ),
            totals.total_additions,
            totals.total_deletions,
          ],
        );
        const first: FileSummary[] = [];
        const ids = files.map(() => randomUUID());
        for (let start = 0; start < files.length; start += FILES_PER_INSERT) {
          const chunk = files.slice(start, start + FILES_PER_INSERT);
          const values: unknown[] = [];
          chunk.forEach((f, i) => {
            const ord = start + i;
            const fr = f as unknown as Row;
            for (const c of FILE_INSERT_COLUMNS) {
              if (c === 'id') values.push(ids[ord]);
              else if (c === 'change_id') values.push(change.change_id);
              else if (c === 'session_id') values.push(change.session_id);
              else if (c === 'ord') values.push(ord);
              else if (c === 'created_at') values.push(change.created_at);
              else if (c === 'binary' || c === 'truncated') values.push(fr[c] ? 1 : 0);
              else values.push(fr[c] ?? null);
            }
          });
          await q.query(
            `INSERT INTO workspace_run_change_files (${FILE_INSERT_COLUMNS.map(quoteColumn).join(', ')})
             VALUES ${valuesRows(chunk.length, FILE_INSERT_COLUMNS.length)}`,
            values,
          );
        }
        files.slice(0, FIRST_FILES_PAGE).forEach((f, ord) => {
          const { patch: _patch, ...summary } = f;
          first.push({ id: ids[ord]!, ...summary });
        });
        if (change.source !== 'tool') {
          // Keep the newest `max` run-level changes; an evicted run takes its tool changes along.
          const over = await q.query<{ run_id: string }>(
            `SELECT run_id FROM workspace_run_changes WHERE session_id = $1 AND source <> 'tool'
             ORDER BY created_at DESC, seq DESC OFFSET $2`,
            [change.session_id, maxChangesPerSession],
          );
          for (const { run_id } of over.rows)
            await q.query('DELETE FROM workspace_run_changes WHERE session_id = $1 AND run_id = $2', [
              change.session_id,
              run_id,
            ]);
        }
        return {
          ...change,
          ...totals,
          ...asFirstPage({
            files: first,
            files_total: files.length,
            next_file_cursor: files.length > FIRST_FILES_PAGE ? String(FIRST_FILES_PAGE - 1) : null,
          }),
        };
      }),
    exists: (sessionId, changeId) => exists(x.q, sessionId, changeId),
    deleteOlderThan: (cutoff) =>
      x.atomic(async (q) => {
        await bump(q, null);
        const { rowCount } = await q.query('DELETE FROM workspace_run_changes WHERE created_at < $1', [cutoff]);
        return rowCount ?? 0;
      }),
    listForSession: async (sessionId) => (await listKeyed(sessionId)).map((k) => k.change),
    listKeyed,
    async seqs(sessionId) {
      const { rows } = await x.q.query<{ seq: number }>(
        'SELECT seq FROM workspace_run_changes WHERE session_id = $1 ORDER BY created_at, seq',
        [sessionId],
      );
      return rows.map((r) => r.seq);
    },
    bySeq: (seq) =>
      x.read(async (q) => {
        const { rows } = await q.query(`SELECT ${CHANGE_COLUMNS} FROM workspace_run_changes WHERE seq = $1`, [seq]);
        const row = rows[0];
        if (!row) return null;
        return toChange(
          row,
          await page(q, row.session_id as string, row.change_id as string, -1, FIRST_FILES_PAGE),
          await storedTotals(q, row),
        );
      }),
    get: (sessionId, changeId) =>
      x.read(async (q) => {
        const { rows } = await q.query(
          `SELECT ${CHANGE_COLUMNS} FROM workspace_run_changes WHERE session_id = $1 AND change_id = $2`,
          [sessionId, changeId],
        );
        const row = rows[0];
        return row
          ? toChange(row, await page(q, sessionId, changeId, -1, FIRST_FILES_PAGE), await storedTotals(q, row))
          : null;
      }),
    filesPage: (sessionId, changeId, after, limit) =>
      x.read(async (q) => {
        if (!(await exists(q, sessionId, changeId))) return null;
        return page(q, sessionId, changeId, after, limit);
      }),
    async getFile(sessionId, changeId, fileId) {
      const { rows } = await x.q.query(
        `SELECT ${FILE_SUMMARY_COLUMNS}, patch FROM workspace_run_change_files
         WHERE session_id = $1 AND change_id = $2 AND id = $3`,
        [sessionId, changeId, fileId],
      );
      const row = rows[0];
      return row ? { ...toFile(row), patch: row.patch as string | null } : null;
    },
    async filesWithPatches(sessionId, changeId) {
      const { rows } = await x.q.query(
        `SELECT ${FILE_SUMMARY_COLUMNS}, patch FROM workspace_run_change_files
         WHERE session_id = $1 AND change_id = $2 ORDER BY ord`,
        [sessionId, changeId],
      );
      return rows.map((row) => ({ ...toFile(row), patch: row.patch as string | null }));
    },
  };
}
