import { randomUUID } from 'node:crypto';
import type { ChangeSummary, FileSummary, FileWithPatch, TruncatedReason } from '../../shared/index.ts';
import type { Db } from './database.ts';
import type { WriteClock } from './write-clock.ts';

/** A change about to be stored: the summary without its files. */
export type NewChange = Omit<ChangeSummary, 'files'>;

/** One changed file about to be stored (its id is assigned here). */
export type NewFile = Omit<FileWithPatch, 'id'>;

interface ChangeRow {
  change_id: string;
  session_id: string;
  run_id: string;
  tool_call_id: string | null;
  source: ChangeSummary['source'];
  workspace: string | null;
  workspace_kind: ChangeSummary['workspace_kind'];
  started_at: number | null;
  finished_at: number | null;
  changed_count: number;
  added_count: number;
  modified_count: number;
  deleted_count: number;
  renamed_count: number;
  binary_count: number;
  truncated: number;
  truncated_reasons: string;
  total_patch_bytes: number;
  overlapping: number;
  omitted_count: number;
  created_at: number;
}

interface FileRow {
  id: string;
  change_id: string;
  path: string;
  old_path: string | null;
  path_base64: string | null;
  old_path_base64: string | null;
  change_type: FileSummary['change_type'];
  additions: number;
  deletions: number;
  binary: number;
  truncated: number;
  size_before: number | null;
  size_after: number | null;
  patch_bytes: number;
  omitted_reason: FileSummary['omitted_reason'];
}

const CHANGE_COLUMNS = `change_id, session_id, run_id, tool_call_id, source, workspace, workspace_kind, started_at,
  finished_at, changed_count, added_count, modified_count, deleted_count, renamed_count, binary_count, truncated,
  truncated_reasons, total_patch_bytes, overlapping, omitted_count, created_at`;
// Never `patch`: summaries stay small however big the stored patches are.
const FILE_SUMMARY_COLUMNS = `id, change_id, path, old_path, path_base64, old_path_base64, change_type, additions,
  deletions, binary, truncated, size_before, size_after, patch_bytes, omitted_reason`;

function toFile(r: FileRow): FileSummary {
  const f: FileSummary = {
    id: r.id,
    path: r.path,
    old_path: r.old_path,
    change_type: r.change_type,
    additions: r.additions,
    deletions: r.deletions,
    binary: r.binary === 1,
    truncated: r.truncated === 1,
    size_before: r.size_before,
    size_after: r.size_after,
    patch_bytes: r.patch_bytes,
    omitted_reason: r.omitted_reason,
  };
  if (r.path_base64 !== null) f.path_base64 = r.path_base64;
  if (r.old_path_base64 !== null) f.old_path_base64 = r.old_path_base64;
  return f;
}

function toChange(r: ChangeRow, files: FileSummary[]): ChangeSummary {
  return {
    change_id: r.change_id,
    session_id: r.session_id,
    run_id: r.run_id,
    tool_call_id: r.tool_call_id,
    source: r.source,
    workspace: r.workspace,
    workspace_kind: r.workspace_kind,
    started_at: r.started_at,
    finished_at: r.finished_at,
    changed_count: r.changed_count,
    added_count: r.added_count,
    modified_count: r.modified_count,
    deleted_count: r.deleted_count,
    renamed_count: r.renamed_count,
    binary_count: r.binary_count,
    truncated: r.truncated === 1,
    truncated_reasons: JSON.parse(r.truncated_reasons) as TruncatedReason[],
    total_patch_bytes: r.total_patch_bytes,
    overlapping: r.overlapping === 1,
    omitted_count: r.omitted_count,
    created_at: r.created_at,
    files,
  };
}

export function createChangeStore(db: Db, clock: WriteClock) {
  const insertChange = db.prepare(
    `INSERT INTO workspace_run_changes (${CHANGE_COLUMNS}) VALUES (@change_id, @session_id, @run_id, @tool_call_id,
       @source, @workspace, @workspace_kind, @started_at, @finished_at, @changed_count, @added_count, @modified_count,
       @deleted_count, @renamed_count, @binary_count, @truncated, @truncated_reasons, @total_patch_bytes, @overlapping,
       @omitted_count, @created_at)`,
  );
  const insertFile = db.prepare(
    `INSERT INTO workspace_run_change_files (id, change_id, session_id, ord, path, old_path, path_base64,
       old_path_base64, change_type, additions, deletions, size_before, size_after, patch, patch_bytes, truncated,
       binary, omitted_reason, created_at)
     VALUES (@id, @change_id, @session_id, @ord, @path, @old_path, @path_base64, @old_path_base64, @change_type,
       @additions, @deletions, @size_before, @size_after, @patch, @patch_bytes, @truncated, @binary, @omitted_reason,
       @created_at)`,
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
  const listSessionFiles = db.prepare<[string], FileRow>(
    `SELECT ${FILE_SUMMARY_COLUMNS} FROM workspace_run_change_files WHERE session_id = ? ORDER BY change_id, ord`,
  );
  const getChange = db.prepare<[string, string], ChangeRow>(
    `SELECT ${CHANGE_COLUMNS} FROM workspace_run_changes WHERE session_id = ? AND change_id = ?`,
  );
  const listChangeFiles = db.prepare<[string, string], FileRow>(
    `SELECT ${FILE_SUMMARY_COLUMNS} FROM workspace_run_change_files WHERE session_id = ? AND change_id = ? ORDER BY ord`,
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

  function listKeyed(sessionId: string): { seq: number; change: ChangeSummary }[] {
    const byChange = new Map<string, FileSummary[]>();
    for (const row of listSessionFiles.all(sessionId)) {
      let list = byChange.get(row.change_id);
      if (!list) byChange.set(row.change_id, (list = []));
      list.push(toFile(row));
    }
    return listChanges
      .all(sessionId)
      .map((r) => ({ seq: r.seq, change: toChange(r, byChange.get(r.change_id) ?? []) }));
  }

  const store = db.transaction((change: NewChange, files: NewFile[], maxChangesPerSession: number): ChangeSummary => {
    insertChange.run({
      ...change,
      truncated: change.truncated ? 1 : 0,
      truncated_reasons: JSON.stringify(change.truncated_reasons),
      overlapping: change.overlapping ? 1 : 0,
    });
    const stored: FileSummary[] = files.map((f, ord) => {
      const id = randomUUID();
      insertFile.run({
        id,
        change_id: change.change_id,
        session_id: change.session_id,
        ord,
        path: f.path,
        old_path: f.old_path,
        path_base64: f.path_base64 ?? null,
        old_path_base64: f.old_path_base64 ?? null,
        change_type: f.change_type,
        additions: f.additions,
        deletions: f.deletions,
        size_before: f.size_before,
        size_after: f.size_after,
        patch: f.patch,
        patch_bytes: f.patch_bytes,
        truncated: f.truncated ? 1 : 0,
        binary: f.binary ? 1 : 0,
        omitted_reason: f.omitted_reason,
        created_at: change.created_at,
      });
      const { patch: _patch, ...summary } = f;
      return { id, ...summary };
    });
    if (change.source !== 'tool') enforceCount(change.session_id, maxChangesPerSession);
    return { ...change, files: stored };
  });

  return {
    /**
     * Stores the summary and its file rows in one transaction together with the newest-N retention
     * (B22, B23). Nested inside a caller's transaction it becomes a savepoint of that transaction.
     */
    insert(change: NewChange, files: NewFile[], maxChangesPerSession: number): ChangeSummary {
      clock.bump(change.session_id);
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
      return row ? toChange(row, listChangeFiles.all(row.session_id, row.change_id).map(toFile)) : null;
    },
    get(sessionId: string, changeId: string): ChangeSummary | null {
      const row = getChange.get(sessionId, changeId);
      return row ? toChange(row, listChangeFiles.all(sessionId, changeId).map(toFile)) : null;
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
