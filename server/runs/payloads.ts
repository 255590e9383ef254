import {
  DIFF_COMPLETED_FILE_FIELDS,
  FILE_SUMMARY_FIELDS,
  pick,
  type ChangeSource,
  type ChangeSummary,
  type CompleteResponse,
  type DiffCompletedPayload,
  type StartResponse,
  type UntrackedReason,
} from '../../shared/index.ts';
import type { DeltaResult, StartResult } from '../checkpoint/types.ts';
import type { DeltaFile } from '../delta/types.ts';
import type { NewChange, NewFile } from '../store/index.ts';

/** Pure shapes: engine results -> stored rows, responses and socket payloads. */

export interface ChangeOwner {
  sessionId: string;
  runId: string;
  changeId: string;
  toolCallId: string | null;
  source: ChangeSource;
}

export function untrackedStart(changeId: string, reason: UntrackedReason): StartResponse {
  return { change_id: changeId, tracking: false, reason };
}

export function trackedStart(changeId: string, r: StartResult): StartResponse {
  return {
    change_id: changeId,
    tracking: true,
    workspace_kind: r.workspace_kind,
    scanned_files: r.scanned_files,
    truncated: r.truncated,
    truncated_reasons: [...r.truncated_reasons],
    duration_ms: r.duration_ms,
  };
}

export function untrackedCompletion(changeId: string, reason: UntrackedReason): CompleteResponse {
  return { change_id: changeId, tracking: false, reason };
}

export function toNewChange(owner: ChangeOwner, d: DeltaResult, createdAt: number): NewChange {
  return {
    change_id: owner.changeId,
    session_id: owner.sessionId,
    run_id: owner.runId,
    tool_call_id: owner.toolCallId,
    source: owner.source,
    workspace: d.workspace,
    workspace_kind: d.workspace_kind,
    started_at: d.started_at,
    finished_at: d.finished_at,
    changed_count: d.changed_count,
    added_count: d.added_count,
    modified_count: d.modified_count,
    deleted_count: d.deleted_count,
    renamed_count: d.renamed_count,
    binary_count: d.binary_count,
    truncated: d.truncated,
    truncated_reasons: [...d.truncated_reasons],
    total_patch_bytes: d.total_patch_bytes,
    overlapping: d.overlapping,
    omitted_count: d.omitted_count,
    created_at: createdAt,
  };
}

export function toNewFile(f: DeltaFile): NewFile {
  const out: NewFile = { ...pick(f, FILE_SUMMARY_FIELDS), patch: f.patch };
  if (f.path_base64 !== undefined) out.path_base64 = f.path_base64;
  if (f.old_path_base64 !== undefined) out.old_path_base64 = f.old_path_base64;
  return out;
}

/** The paging fields of a stored change, when its files are only the first page. */
function pagingOf(c: ChangeSummary | null): Pick<ChangeSummary, 'files_total' | 'next_file_cursor'> {
  if (!c || c.next_file_cursor === undefined || c.files_total === undefined) return {};
  return { files_total: c.files_total, next_file_cursor: c.next_file_cursor };
}

/** The completion answer for a tracked change (stored or, with no changed file, not). */
export function trackedCompletion(changeId: string, d: DeltaResult, stored: ChangeSummary | null): CompleteResponse {
  return {
    change_id: changeId,
    tracking: true,
    changed_count: d.changed_count,
    files: stored ? stored.files : [],
    truncated: d.truncated,
    truncated_reasons: [...d.truncated_reasons],
    omitted_count: d.omitted_count,
    overlapping: d.overlapping,
    ...pagingOf(stored),
  };
}

/** `workspace.diff.completed`: the design document's payload plus our fields; never a patch. */
export function diffCompletedPayload(c: ChangeSummary): DiffCompletedPayload {
  return {
    event: 'workspace.diff.completed',
    session_id: c.session_id,
    run_id: c.run_id,
    change_id: c.change_id,
    changed_count: c.changed_count,
    files: c.files.map((f) => pick(f, DIFF_COMPLETED_FILE_FIELDS)),
    truncated: c.truncated,
    source: c.source,
    tool_call_id: c.tool_call_id,
    overlapping: c.overlapping,
    omitted_count: c.omitted_count,
    total_additions: c.total_additions,
    total_deletions: c.total_deletions,
    ...pagingOf(c),
  };
}
