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
import type { Db } from './database.ts';
import { pickFields, toInt, type SqliteRow } from './rows.ts';
import type { WriteClock } from './write-clock.ts';

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

const CHANGE_COLUMNS = [...CHANGE_FIELDS, ...CHANGE_TOTAL_COLUMNS].join(', ');
/** A file row's columns for a summary: never `patch`, so summaries stay small however big the stored patches are. */
export const FILE_SUMMARY_COLUMN_LIST = ['id', 'change_id', ...FILE_SUMMARY_FIELDS, 'path_base64', 'old_path_base64'];
const FILE_SUMMARY_COLUMNS = FILE_SUMMARY_COLUMN_LIST.join(', ');
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

function toChange(r: ChangeRow, page: ChangeFilesPage, totals: () => Totals): ChangeSummary {
  return {
    ...pickFields<ChangeSummary, (typeof CHANGE_FIELDS)[number]>(r, CHANGE_FIELDS, CHANGE_BOOLEANS),
    truncated_reasons: JSON.parse(r.truncated_reasons) as TruncatedReason[],
    ...(keptTotals(r) ?? totals()),
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

export function createChangeStore(db: Db, clock: WriteClock) {
  const insertChange = db.prepare(
    `INSERT INTO workspace_run_changes (${CHANGE_COLUMNS})
     VALUES (${[...CHANGE_FIELDS, ...CHANGE_TOTAL_COLUMNS].map((c) => `@${c}`).join(', ')})`,
  );
  const insertFile = db.prepare(
    `INSERT INTO workspace_run_change_files (${FILE_INSERT_COLUMNS.join(', ')})
     VALUES (${FILE_INSERT_COLUMNS.map((c) => `@${c}`).join(', ')})`,
  );
  const existsStmt = db.prepare<[string, string], { one: number }>(
    'SELECT 1 AS one FROM workspace_run_changes WHERE session_id = ? AND change_id = ?',
  );
  const overflowRuns = db.prepare<[string, number], { run_id: string }>(
    `SELECT run_id FROM workspace_run_changes WHERE session_id = ? AND source <> 'tool'
     ORDER BY created_at DESC, seq DESC LIMIT -1 OFFSET ?`,
  );
  const deleteRunChanges = db.prepare<[string, string]>(
    'DELETE FROM workspace_run_changes WHERE session_id = ? AND run_id = ?',
  );
  const deleteOlder = db.prepare<[number]>('DELETE FROM workspace_run_changes WHERE created_at < ?');
  const listChanges = db.prepare<[string], ChangeRow & { seq: number }>(
    `SELECT seq, ${CHANGE_COLUMNS} FROM workspace_run_changes WHERE session_id = ? ORDER BY created_at, seq`,
  );
  const listSeqs = db
    .prepare<[string], number>('SELECT seq FROM workspace_run_changes WHERE session_id = ? ORDER BY created_at, seq')
    .pluck();
  const getBySeq = db.prepare<[number], ChangeRow>(`SELECT ${CHANGE_COLUMNS} FROM workspace_run_changes WHERE seq = ?`);
  // Only the first page of each change: `ord` runs 0..n-1 in path order within a change.
  const listSessionFiles = db.prepare<[string, number], FileRow & { ord: number }>(
    `SELECT ${FILE_SUMMARY_COLUMNS}, ord FROM workspace_run_change_files WHERE session_id = ? AND ord <= ?
     ORDER BY change_id, ord`,
  );
  const countSessionFiles = db.prepare<[string], { change_id: string; n: number }>(
    'SELECT change_id, COUNT(*) AS n FROM workspace_run_change_files WHERE session_id = ? GROUP BY change_id',
  );
  // Positions run 0..n-1, so the last one counts the rows: one index probe, where COUNT(*) would walk
  // every row of a large change on each page.
  const countChangeFiles = db
    .prepare<[string, string], number | null>(
      'SELECT MAX(ord) + 1 FROM workspace_run_change_files WHERE session_id = ? AND change_id = ?',
    )
    .pluck();
  // A change stored before the totals were kept: counted from its rows when read.
  const sumChangeFiles = db.prepare<[string, string], { a: number | null; d: number | null }>(
    'SELECT SUM(additions) AS a, SUM(deletions) AS d FROM workspace_run_change_files WHERE session_id = ? AND change_id = ?',
  );
  const summed = (sessionId: string, changeId: string) => (): Totals => {
    const r = sumChangeFiles.get(sessionId, changeId);
    return { total_additions: r?.a ?? 0, total_deletions: r?.d ?? 0 };
  };
  const getChange = db.prepare<[string, string], ChangeRow>(
    `SELECT ${CHANGE_COLUMNS} FROM workspace_run_changes WHERE session_id = ? AND change_id = ?`,
  );
  // One row past the page says whether another page follows.
  const pageChangeFiles = db.prepare<[string, string, number, number], FileRow & { ord: number }>(
    `SELECT ${FILE_SUMMARY_COLUMNS}, ord FROM workspace_run_change_files
     WHERE session_id = ? AND change_id = ? AND ord > ? ORDER BY ord LIMIT ?`,
  );
  const getFileWithPatch = db.prepare<[string, string, string], FileRow & { patch: string | null }>(
    `SELECT ${FILE_SUMMARY_COLUMNS}, patch FROM workspace_run_change_files
     WHERE session_id = ? AND change_id = ? AND id = ?`,
  );
  const listPatches = db.prepare<[string, string], FileRow & { patch: string | null }>(
    `SELECT ${FILE_SUMMARY_COLUMNS}, patch FROM workspace_run_change_files
     WHERE session_id = ? AND change_id = ? ORDER BY ord`,
  );

  /**
   * Keeps the newest `max` run-level changes of a session; an evicted run takes its tool changes
   * along. Runs inside the storing transaction.
   */
  function enforceCount(sessionId: string, max: number): number {
    let removed = 0;
    for (const { run_id } of overflowRuns.all(sessionId, max))
      removed += deleteRunChanges.run(sessionId, run_id).changes;
    return removed;
  }

  function page(sessionId: string, changeId: string, after: number, limit: number): ChangeFilesPage {
    const rows = pageChangeFiles.all(sessionId, changeId, after, limit + 1);
    return pageOf(rows, countChangeFiles.get(sessionId, changeId) ?? 0, limit);
  }

  function listKeyed(sessionId: string): { seq: number; change: ChangeSummary }[] {
    const byChange = new Map<string, FileRow[]>();
    for (const row of listSessionFiles.all(sessionId, FIRST_FILES_PAGE)) {
      let list = byChange.get(row.change_id);
      if (!list) byChange.set(row.change_id, (list = []));
      list.push(row);
    }
    const totals = new Map(countSessionFiles.all(sessionId).map((c) => [c.change_id, c.n]));
    return listChanges.all(sessionId).map((r) => ({
      seq: r.seq,
      change: toChange(
        r,
        pageOf(byChange.get(r.change_id) ?? [], totals.get(r.change_id) ?? 0, FIRST_FILES_PAGE),
        summed(sessionId, r.change_id),
      ),
    }));
  }

  const store = db.transaction((change: NewChange, files: NewFile[], maxChangesPerSession: number): ChangeSummary => {
    const totals = totalsOf(files);
    insertChange.run({
      ...change,
      ...totals,
      truncated: toInt(change.truncated),
      truncated_reasons: JSON.stringify(change.truncated_reasons),
      overlapping: toInt(change.overlapping),
    });
    // Only the first page is kept in memory for the answer; every row goes to the table.
    const first: FileSummary[] = [];
    files.forEach((f, ord) => {
      const id = randomUUID();
      insertFile.run({
        ...f,
        id,
        change_id: change.change_id,
        session_id: change.session_id,
        ord,
        path_base64: f.path_base64 ?? null,
        old_path_base64: f.old_path_base64 ?? null,
        truncated: toInt(f.truncated),
        binary: toInt(f.binary),
        created_at: change.created_at,
      });
      if (ord >= FIRST_FILES_PAGE) return;
      const { patch: _patch, ...summary } = f;
      first.push({ id, ...summary });
    });
    if (change.source !== 'tool') enforceCount(change.session_id, maxChangesPerSession);
    return {
      ...change,
      ...totals,
      ...asFirstPage({
        files: first,
        files_total: files.length,
        next_file_cursor: files.length > FIRST_FILES_PAGE ? String(FIRST_FILES_PAGE - 1) : null,
      }),
    };
  });

  return {
    /**
     * Stores the summary and its file rows in one transaction together with the newest-N retention
     * (B22, B23). Nested inside a caller's transaction it becomes a savepoint of that transaction.
     */
    insert(change: NewChange, files: NewFile[], maxChangesPerSession: number): ChangeSummary {
      clock.bump(change.session_id, 'changes');
      return store(change, files, maxChangesPerSession);
    },
    exists(sessionId: string, changeId: string): boolean {
      return existsStmt.get(sessionId, changeId) !== undefined;
    },
    /** The age sweep: removes changes (and their files) stored before `cutoff`. */
    deleteOlderThan(cutoff: number): number {
      clock.bump(null);
      return deleteOlder.run(cutoff).changes;
    },
    /** Every change of a session, oldest first, with file summaries (never patch bodies). */
    listForSession(sessionId: string): ChangeSummary[] {
      return listKeyed(sessionId).map((k) => k.change);
    },
    /** The same with each change's `seq`: a stored change never changes and a seq is never reused. */
    listKeyed,
    /** The seqs of a session's changes, oldest first (cheap: no file rows). */
    seqs(sessionId: string): number[] {
      return listSeqs.all(sessionId);
    },
    bySeq(seq: number): ChangeSummary | null {
      const row = getBySeq.get(seq);
      return row
        ? toChange(
            row,
            page(row.session_id, row.change_id, -1, FIRST_FILES_PAGE),
            summed(row.session_id, row.change_id),
          )
        : null;
    },
    get(sessionId: string, changeId: string): ChangeSummary | null {
      const row = getChange.get(sessionId, changeId);
      return row ? toChange(row, page(sessionId, changeId, -1, FIRST_FILES_PAGE), summed(sessionId, changeId)) : null;
    },
    /** Stored rows in path order after the row at position `after` (-1: from the first); null for an unknown change. */
    filesPage(sessionId: string, changeId: string, after: number, limit: number): ChangeFilesPage | null {
      if (existsStmt.get(sessionId, changeId) === undefined) return null;
      return page(sessionId, changeId, after, limit);
    },
    /** One file with its patch: the only read of a single patch body. */
    getFile(sessionId: string, changeId: string, fileId: string): FileWithPatch | null {
      const row = getFileWithPatch.get(sessionId, changeId, fileId);
      return row ? { ...toFile(row), patch: row.patch } : null;
    },
    /** Every file of a change with its patch, in path order (for the whole-run patch). */
    filesWithPatches(sessionId: string, changeId: string): FileWithPatch[] {
      return listPatches.all(sessionId, changeId).map((row) => ({ ...toFile(row), patch: row.patch }));
    },
  };
}

export type ChangeStore = ReturnType<typeof createChangeStore>;
