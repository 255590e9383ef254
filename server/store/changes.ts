import { randomUUID } from 'node:crypto';
import {
  FILE_SUMMARY_FIELDS,
  FIRST_FILES_PAGE,
  fieldsOf,
  type ChangeFilesPage,
  type ChangeSummary,
  type FileSummary,
  type FileWithPatch,
  type TruncatedReason,
} from '../../shared/index.ts';
import { insertRows, rowsPerStatement } from './batches.ts';
import { pickFields, toInt, type SqliteRow } from './rows.ts';
import type { WriteClock } from './sql/clock.ts';
import { perDialect } from './sql/dialect.ts';
import type { Param, Sql } from './sql/types.ts';
import type { ChangesApi } from './types.ts';

/** A change about to be stored: the summary without its files (and the totals the store counts over them). */
export type NewChange = Omit<
  ChangeSummary,
  'files' | 'files_total' | 'next_file_cursor' | 'total_additions' | 'total_deletions'
>;

/** The change's line totals over its rows; null in a change stored before they were kept. */
type Totals = Pick<ChangeSummary, 'total_additions' | 'total_deletions'>;
/** The totals' columns, after the change's own (every engine names them from here). */
export const CHANGE_TOTAL_COLUMNS = ['total_additions', 'total_deletions'] as const;

/** Lines added and deleted over every row of a change about to be stored. */
export function totalsOf(files: readonly Pick<FileSummary, 'additions' | 'deletions'>[]): Totals {
  let total_additions = 0;
  let total_deletions = 0;
  for (const f of files) {
    total_additions += f.additions;
    total_deletions += f.deletions;
  }
  return { total_additions, total_deletions };
}

/** One changed file about to be stored (its id is assigned here). */
export type NewFile = Omit<FileWithPatch, 'id'>;

type FileSummaryField = (typeof FILE_SUMMARY_FIELDS)[number];

type ChangeRow = SqliteRow<
  Omit<NewChange, 'truncated_reasons'> & { truncated_reasons: string },
  'truncated' | 'overlapping'
> & { total_additions: number | null; total_deletions: number | null };

/** A file's row: its summary with the change it belongs to, names not valid UTF-8 kept as NULL otherwise. */
type FileRow = SqliteRow<Omit<FileSummary, 'path_base64' | 'old_path_base64'>, 'binary' | 'truncated'> & {
  change_id: string;
  path_base64: string | null;
  old_path_base64: string | null;
};

const FILE_BOOLEANS: ReadonlySet<string> = new Set(['binary', 'truncated'] satisfies (keyof FileSummary)[]);
const CHANGE_BOOLEANS: ReadonlySet<string> = new Set(['truncated', 'overlapping'] satisfies (keyof ChangeSummary)[]);

/** The columns of a stored change, in their order (every engine names them from here). */
export const CHANGE_FIELDS = fieldsOf<NewChange>()([
  'change_id',
  'session_id',
  'run_id',
  'tool_call_id',
  'source',
  'workspace',
  'workspace_kind',
  'started_at',
  'finished_at',
  'changed_count',
  'added_count',
  'modified_count',
  'deleted_count',
  'renamed_count',
  'binary_count',
  'truncated',
  'truncated_reasons',
  'total_patch_bytes',
  'overlapping',
  'omitted_count',
  'created_at',
]);

/** A column named in a statement: `binary` is a keyword in PostgreSQL, so it is quoted wherever it is named. */
export const quoteColumn = (c: string): string => (c === 'binary' ? '"binary"' : c);

const CHANGE_COLUMNS = [...CHANGE_FIELDS, ...CHANGE_TOTAL_COLUMNS].join(', ');
/** A file row's columns for a summary: never `patch`, so summaries stay small however big the stored patches are. */
export const FILE_SUMMARY_COLUMN_LIST = ['id', 'change_id', ...FILE_SUMMARY_FIELDS, 'path_base64', 'old_path_base64'];
const FILE_SUMMARY_COLUMNS = FILE_SUMMARY_COLUMN_LIST.map(quoteColumn).join(', ');
/** A stored file row's columns, in the order a change's insert writes them (every engine names them from here). */
export const FILE_INSERT_COLUMNS = [
  'id',
  'change_id',
  'session_id',
  'ord',
  ...FILE_SUMMARY_FIELDS,
  'path_base64',
  'old_path_base64',
  'patch',
  'created_at',
];

function toFile(r: FileRow): FileSummary {
  const f: FileSummary = {
    id: r.id,
    ...pickFields<FileSummary, FileSummaryField>(r, FILE_SUMMARY_FIELDS, FILE_BOOLEANS),
  };
  if (r.path_base64 !== null) f.path_base64 = r.path_base64;
  if (r.old_path_base64 !== null) f.old_path_base64 = r.old_path_base64;
  return f;
}

/**
 * The cursor of a page is the `ord` (position in path order) of its last row: a stored change never
 * changes, so a cursor stays valid and each row comes exactly once.
 */
function pageOf(rows: FileRow[], total: number, limit: number): ChangeFilesPage {
  const files = rows.slice(0, limit).map(toFile);
  const last = rows[Math.min(rows.length, limit) - 1] as (FileRow & { ord: number }) | undefined;
  const more = rows.length > limit;
  return { files, files_total: total, next_file_cursor: more && last ? String(last.ord) : null };
}

function toChange(r: ChangeRow, page: ChangeFilesPage, totals: Totals): ChangeSummary {
  return {
    ...pickFields<ChangeSummary, (typeof CHANGE_FIELDS)[number]>(r, CHANGE_FIELDS, CHANGE_BOOLEANS),
    truncated_reasons: JSON.parse(r.truncated_reasons) as TruncatedReason[],
    ...totals,
    ...asFirstPage(page),
  };
}

/** The totals a change's row keeps; null for a change stored by an older release (counted from its rows instead). */
export function keptTotals(r: { total_additions?: unknown; total_deletions?: unknown }): Totals | null {
  if (r.total_additions == null || r.total_deletions == null) return null;
  return { total_additions: Number(r.total_additions), total_deletions: Number(r.total_deletions) };
}

/** A summary's files: the paging fields only when there is a next page, so small changes read as before. */
function asFirstPage(page: ChangeFilesPage): Pick<ChangeSummary, 'files' | 'files_total' | 'next_file_cursor'> {
  if (page.next_file_cursor === null) return { files: page.files };
  return { files: page.files, files_total: page.files_total, next_file_cursor: page.next_file_cursor };
}

/** A stored change's statements, written once for both engines. */
const SQL = {
  insertChange: `INSERT INTO workspace_run_changes (${CHANGE_COLUMNS})`,
  insertFiles: `INSERT INTO workspace_run_change_files (${FILE_INSERT_COLUMNS.map(quoteColumn).join(', ')})`,
  exists: 'SELECT 1 AS one FROM workspace_run_changes WHERE session_id = ? AND change_id = ?',
  deleteRun: 'DELETE FROM workspace_run_changes WHERE session_id = ? AND run_id = ?',
  deleteOlder: 'DELETE FROM workspace_run_changes WHERE created_at < ?',
  list: `SELECT seq, ${CHANGE_COLUMNS} FROM workspace_run_changes WHERE session_id = ? ORDER BY created_at, seq`,
  seqs: 'SELECT seq FROM workspace_run_changes WHERE session_id = ? ORDER BY created_at, seq',
  bySeq: `SELECT ${CHANGE_COLUMNS} FROM workspace_run_changes WHERE seq = ?`,
  get: `SELECT ${CHANGE_COLUMNS} FROM workspace_run_changes WHERE session_id = ? AND change_id = ?`,
  // Only the first page of each change: `ord` runs 0..n-1 in path order within a change.
  sessionFiles: `SELECT ${FILE_SUMMARY_COLUMNS}, ord FROM workspace_run_change_files WHERE session_id = ? AND ord <= ?
     ORDER BY change_id, ord`,
  countSessionFiles:
    'SELECT change_id, COUNT(*) AS n FROM workspace_run_change_files WHERE session_id = ? GROUP BY change_id',
  // Positions run 0..n-1, so the last one counts the rows: one index probe, where COUNT(*) would walk
  // every row of a large change on each page.
  countChangeFiles: 'SELECT MAX(ord) + 1 AS n FROM workspace_run_change_files WHERE session_id = ? AND change_id = ?',
  // A change stored before the totals were kept: counted from its rows when read.
  sumChangeFiles: `SELECT SUM(additions) AS a, SUM(deletions) AS d FROM workspace_run_change_files
     WHERE session_id = ? AND change_id = ?`,
  // One row past the page says whether another page follows.
  page: `SELECT ${FILE_SUMMARY_COLUMNS}, ord FROM workspace_run_change_files
     WHERE session_id = ? AND change_id = ? AND ord > ? ORDER BY ord LIMIT ?`,
  fileWithPatch: `SELECT ${FILE_SUMMARY_COLUMNS}, patch FROM workspace_run_change_files
     WHERE session_id = ? AND change_id = ? AND id = ?`,
  patches: `SELECT ${FILE_SUMMARY_COLUMNS}, patch FROM workspace_run_change_files
     WHERE session_id = ? AND change_id = ? ORDER BY ord`,
};

/** The run-level changes of a session past its newest `max` (their runs are evicted). */
const overflowRuns = perDialect(
  (d) => `SELECT run_id FROM workspace_run_changes WHERE session_id = ? AND source <> 'tool'
   ORDER BY created_at DESC, seq DESC ${d.offset('?')}`,
);

type Row = Record<string, unknown>;

/** The totals a change's row keeps, or (a change stored by an older release) the sums of its rows. */
async function storedTotals(q: Sql, r: ChangeRow): Promise<Totals> {
  const kept = keptTotals(r);
  if (kept) return kept;
  const sums = await q.get<{ a: number | null; d: number | null }>(SQL.sumChangeFiles, [r.session_id, r.change_id]);
  return { total_additions: Number(sums?.a ?? 0), total_deletions: Number(sums?.d ?? 0) };
}

async function page(q: Sql, sessionId: string, changeId: string, after: number, limit: number) {
  const rows = await q.all<FileRow & { ord: number }>(SQL.page, [sessionId, changeId, after, limit + 1]);
  const total = await q.get<{ n: number | null }>(SQL.countChangeFiles, [sessionId, changeId]);
  return pageOf(rows, total?.n ?? 0, limit);
}

/** A stored change's summary with its first page of files; null when it is not stored. */
async function summaryOf(q: Sql, row: ChangeRow | undefined): Promise<ChangeSummary | null> {
  if (!row) return null;
  const first = await page(q, row.session_id, row.change_id, -1, FIRST_FILES_PAGE);
  return toChange(row, first, await storedTotals(q, row));
}

async function listKeyedIn(q: Sql, sessionId: string): Promise<{ seq: number; change: ChangeSummary }[]> {
  const byChange = new Map<string, FileRow[]>();
  for (const row of await q.all<FileRow & { ord: number }>(SQL.sessionFiles, [sessionId, FIRST_FILES_PAGE])) {
    let list = byChange.get(row.change_id);
    if (!list) byChange.set(row.change_id, (list = []));
    list.push(row);
  }
  const counts = await q.all<{ change_id: string; n: number }>(SQL.countSessionFiles, [sessionId]);
  const totals = new Map(counts.map((c) => [c.change_id, c.n]));
  const out: { seq: number; change: ChangeSummary }[] = [];
  for (const r of await q.all<ChangeRow & { seq: number }>(SQL.list, [sessionId]))
    out.push({
      seq: r.seq,
      change: toChange(
        r,
        pageOf(byChange.get(r.change_id) ?? [], totals.get(r.change_id) ?? 0, FIRST_FILES_PAGE),
        await storedTotals(q, r),
      ),
    });
  return out;
}

/** A change's row as inserted: its fields in `CHANGE_FIELDS` order, then its totals. */
function changeParams(change: NewChange, totals: Totals): Param[] {
  const row = change as unknown as Row;
  const fields = CHANGE_FIELDS.map((k): Param => {
    if (k === 'truncated' || k === 'overlapping') return toInt(change[k]);
    if (k === 'truncated_reasons') return JSON.stringify(change.truncated_reasons);
    return row[k] as Param;
  });
  return [...fields, totals.total_additions, totals.total_deletions];
}

/** A file row as inserted, in `FILE_INSERT_COLUMNS` order. */
function fileParams(change: NewChange, f: NewFile, id: string, ord: number): Param[] {
  const row = f as unknown as Row;
  return FILE_INSERT_COLUMNS.map((c): Param => {
    switch (c) {
      case 'id':
        return id;
      case 'change_id':
        return change.change_id;
      case 'session_id':
        return change.session_id;
      case 'ord':
        return ord;
      case 'created_at':
        return change.created_at;
      case 'binary':
      case 'truncated':
        return toInt(f[c]);
      default:
        return (row[c] ?? null) as Param;
    }
  });
}

const FILES_PER_INSERT = rowsPerStatement(FILE_INSERT_COLUMNS.length);

/**
 * Keeps the newest `max` run-level changes of a session; an evicted run takes its tool changes
 * along. Runs inside the storing transaction.
 */
async function enforceCount(q: Sql, sessionId: string, max: number): Promise<number> {
  let removed = 0;
  for (const { run_id } of await q.all<{ run_id: string }>(overflowRuns(q.dialect), [sessionId, max]))
    removed += await q.run(SQL.deleteRun, [sessionId, run_id]);
  return removed;
}

/** The change store over `sql` (the top-level executor, or one bound to an open transaction). */
export function createChangeStore(sql: Sql, clock: WriteClock): ChangesApi {
  const exists = async (q: Sql, sessionId: string, changeId: string) =>
    (await q.get(SQL.exists, [sessionId, changeId])) !== undefined;
  const listKeyed = (sessionId: string) => sql.read((q) => listKeyedIn(q, sessionId));

  return {
    /**
     * Stores the summary and its file rows in one transaction together with the newest-N retention
     * (B22, B23). Nested inside a caller's transaction it becomes a savepoint of that transaction.
     */
    insert: (change, files, maxChangesPerSession) =>
      sql.atomic(async (q) => {
        clock.bump(q, change.session_id, 'changes');
        const totals = totalsOf(files);
        await insertRows((t, p) => q.run(t, p), SQL.insertChange, [changeParams(change, totals)]);
        const ids = files.map(() => randomUUID());
        // Many rows per statement: a change of 100,000 files is a few hundred statements.
        await insertRows(
          (t, p) => q.run(t, p),
          SQL.insertFiles,
          files.map((f, ord) => fileParams(change, f, ids[ord]!, ord)),
          '',
          FILES_PER_INSERT,
        );
        // Only the first page is kept for the answer; every row went to the table.
        const first: FileSummary[] = files.slice(0, FIRST_FILES_PAGE).map((f, ord) => {
          const { patch: _patch, ...summary } = f;
          return { id: ids[ord]!, ...summary };
        });
        if (change.source !== 'tool') await enforceCount(q, change.session_id, maxChangesPerSession);
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
    exists: (sessionId, changeId) => exists(sql, sessionId, changeId),
    /** The age sweep: removes changes (and their files) stored before `cutoff`. */
    deleteOlderThan: (cutoff) =>
      sql.atomic(async (q) => {
        clock.bump(q, null);
        return q.run(SQL.deleteOlder, [cutoff]);
      }),
    /** Every change of a session, oldest first, with file summaries (never patch bodies). */
    listForSession: async (sessionId) => (await listKeyed(sessionId)).map((k) => k.change),
    /** The same with each change's `seq`: a stored change never changes and a seq is never reused. */
    listKeyed,
    /** The seqs of a session's changes, oldest first (cheap: no file rows). */
    seqs: async (sessionId) => (await sql.all<{ seq: number }>(SQL.seqs, [sessionId])).map((r) => r.seq),
    bySeq: (seq) => sql.read(async (q) => summaryOf(q, await q.get<ChangeRow>(SQL.bySeq, [seq]))),
    get: (sessionId, changeId) =>
      sql.read(async (q) => summaryOf(q, await q.get<ChangeRow>(SQL.get, [sessionId, changeId]))),
    /** Stored rows in path order after the row at position `after` (-1: from the first); null for an unknown change. */
    filesPage: (sessionId, changeId, after, limit) =>
      sql.read(async (q) =>
        (await exists(q, sessionId, changeId)) ? page(q, sessionId, changeId, after, limit) : null,
      ),
    /** One file with its patch: the only read of a single patch body. */
    async getFile(sessionId, changeId, fileId) {
      const row = await sql.get<FileRow & { patch: string | null }>(SQL.fileWithPatch, [sessionId, changeId, fileId]);
      return row ? { ...toFile(row), patch: row.patch } : null;
    },
    /** Every file of a change with its patch, in path order (for the whole-run patch). */
    filesWithPatches: async (sessionId, changeId) =>
      (await sql.all<FileRow & { patch: string | null }>(SQL.patches, [sessionId, changeId])).map((row) => ({
        ...toFile(row),
        patch: row.patch,
      })),
  };
}
