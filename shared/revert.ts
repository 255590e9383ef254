/** Undoing a run: the content store's figures and the revert route's request and answers. */
import type { FileSummary, TruncatedReason } from './dto.ts';

/**
 * Why a side of a changed file has no stored content, so the file cannot be reverted:
 * `too_large` over the per-file bound (or the snapshot cap), `no_snapshot` / `unreadable` as the
 * delta saw it, `submodule` (a gitlink has no bytes to restore), `budget` (the store's budget was
 * full even after evicting every older change), `evicted` (removed later to make room for newer
 * changes), `storage_failed` (the database refused the write), `not_recorded` (stored before
 * contents were kept, or past the stored-row bound), `pending` (still being written, or the server
 * stopped while it was).
 */
export type ContentUnavailableReason =
  | 'too_large'
  | 'no_snapshot'
  | 'unreadable'
  | 'submodule'
  | 'budget'
  | 'evicted'
  | 'storage_failed'
  | 'not_recorded'
  | 'pending';

/** The content store's use, served by `GET /api/health` as `content_store`. */
export interface ContentStoreStats {
  /** Compressed bytes of every kept content (what the budget counts). */
  bytes_used: number;
  /** The budget (`RUNDIFF_CONTENT_STORE_MAX_BYTES`). */
  max_bytes: number;
  /** Distinct contents kept (content-addressed: a repeated content counts once). */
  blobs: number;
}

/** `POST .../workspace-run-changes/:changeId/revert` body. */
export interface RevertRequest {
  /** Files of the change to revert; absent: all of them. */
  file_ids?: string[];
  /** true: answer the plan and the patches, write nothing. */
  dry_run?: boolean;
  /**
   * true: write the files that revert cleanly and leave the others (conflicts, contents not kept,
   * refused paths) as they are. Default false: all or nothing; when any file cannot be reverted
   * nothing is written and the answer (409) names each file and why, and a write that fails midway
   * puts back the files already written.
   */
  partial?: boolean;
  /**
   * Undo single hunks instead of whole files: each names a file of the change and one hunk of its
   * patch by its header (`@@ -12,4 +12,6 @@`, the ranges as the patch prints them). The hunks'
   * inverse is merged three ways into what the file holds now, like a file's revert; the rest of the
   * file keeps the run's edits. Not with `file_ids`; only files the run modified or renamed.
   * `lines`: undo only these lines of the hunk, each the index of a `+` or `-` line among the hunk's
   * body lines (0 = the first line after the header; `\ No newline at end of file` marks are not
   * counted). An unchosen `+` line stays, an unchosen `-` line stays removed. A context line or an
   * index past the hunk's end is refused (400).
   */
  hunks?: { file_id: string; hunk: string; lines?: number[] }[];
  /**
   * The `plan_id` of the dry run the user looked at: the revert applies only that plan. When what
   * stands in the workspace (or what the revert would write) changed since, nothing is written and
   * the answer is `409 revert_plan_changed` with the new plan in `details`.
   */
  plan_id?: string;
}

/**
 * What reverting one file does (dry run) or did: `restore` its current bytes are the run's end, so
 * the start comes back as it was; `merge` it changed since, and a three-way merge folds the undo
 * into those edits cleanly; `conflict` the merge does not fold (or a side cannot be merged: binary,
 * a link, a file deleted or created since), so the file is left alone; `unchanged` it is already as
 * it was before the run; `unavailable` its content was not kept (see `reason`); `refused` the path
 * cannot be written safely (a folder on its way leads outside the workspace, or is not a folder).
 */
export type RevertAction = 'restore' | 'merge' | 'conflict' | 'unchanged' | 'unavailable' | 'refused';

export interface RevertFile {
  file_id: string;
  path: string;
  old_path: string | null;
  action: RevertAction;
  /** Why the file is `conflict`, `unavailable` or `refused` (a reason code or a sentence); else null. */
  reason: string | null;
  /** The git-style patch from the file's current state to what is (or would be) written; null when nothing is written. */
  patch: string | null;
  /** For a text conflict: the merge with git's conflict markers, to show the conflicting lines. */
  conflict: string | null;
  /** Real reverts only: true once the file was written (or removed); false for a dry run. */
  applied: boolean;
  /** A write that failed after the plan allowed it (a disk error): its message. */
  error?: string;
}

export interface RevertResponse {
  change_id: string;
  dry_run: boolean;
  files: RevertFile[];
  /** Files written (real revert) or that would be written (dry run): `restore` and `merge`. */
  applied_count: number;
  conflict_count: number;
  /** `unavailable` and `refused` files. */
  unavailable_count: number;
  /** The run that recorded the revert in the session (source `revert`); null for a dry run or when nothing was written. */
  revert_run_id: string | null;
  /** The revert run's stored change; null as `revert_run_id` is, or when it could not be recorded (the workspace moved while the revert ran). */
  revert_change_id: string | null;
  /** Identity of the plan (what stood at each path, what each file would become): send it back as `plan_id`. */
  plan_id: string;
}

/** A file of the session's net change: a change's file row plus what may make it inexact. */
/** A stored file row of a run (`run:<id>` change id and the row's id). */
export interface NetSideRow {
  change_id: string;
  file_id: string;
}

export interface NetFileSummary extends FileSummary {
  /**
   * The net patch's content hash: sha256 (hex) of the path (and old path), the change type, and each
   * side's mode and content id (a side whose content was not kept: its size and the patch text). Two
   * net files with the same hash show the same patch; a viewed mark holds the hash it was made on.
   */
  net_hash: string;
  /**
   * The stored rows whose sides are the net patch's sides: `before` is the first run of the range
   * that touched the path (its before side is the net start), `after` the last one (its after side is
   * the net end, the file as it stands at the range end). Null where the net file has no such side
   * (added: no before; deleted: no after). Comments on the net patch's lines are written on these
   * rows, and the context between hunks is read from them.
   */
  sides: { before: NetSideRow | null; after: NetSideRow | null };
  /** Run-level changes of the session outside the range that also changed this path (oldest first). */
  outside_change_ids: string[];
  /**
   * true when, between two runs of the range that changed this path, it was changed by something no
   * run recorded (one run's end differs from the next one's start): the net change still goes from
   * the first run's start to the last one's end, and says so rather than guess who changed what.
   */
  interleaved: boolean;
}

/**
 * `GET /api/hermes/sessions/:id/net-change`: every path the range's runs changed, from its content
 * at the first one's start to its content at the last one's end; the counts of a change summary.
 */
export interface NetChange {
  session_id: string;
  workspace: string | null;
  /** The range, oldest first: run-level change ids (`run:<id>`). */
  from_change_id: string | null;
  to_change_id: string | null;
  change_ids: string[];
  changed_count: number;
  added_count: number;
  modified_count: number;
  deleted_count: number;
  renamed_count: number;
  binary_count: number;
  truncated: boolean;
  truncated_reasons: TruncatedReason[];
  total_patch_bytes: number;
  omitted_count: number;
  files: NetFileSummary[];
}
