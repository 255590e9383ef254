/** Every error code of docs/contract.md section 6, with its HTTP status. */
export const ERROR_STATUS = {
  invalid_input: 400,
  invalid_ref: 400,
  unauthorized: 401,
  forbidden_origin: 403,
  not_found: 404,
  repository_not_found: 404,
  not_a_repository: 404,
  repository_ambiguous: 409,
  /** A short change id (`run:cc3e822d`) starts more than one run's (or tool call's) id; `details.candidates` lists them. */
  change_ambiguous: 409,
  review_required: 409,
  stale_review: 409,
  filter_required: 409,
  nothing_to_commit: 409,
  missing_identity: 409,
  index_locked: 409,
  approval_denied: 409,
  approval_timeout: 409,
  /** A revert wrote nothing because every file asked for conflicts with later edits; `details.files` has the plan. */
  revert_conflict: 409,
  /** A revert wrote nothing because no file asked for has its content kept (or can be written safely). */
  content_unavailable: 409,
  /** A revert named the plan of its preview (`plan_id`) and the workspace changed since: nothing was written. */
  revert_plan_changed: 409,
  /** A run or tool call is still open on the workspace (or another revert is running): reverting now would race it. */
  workspace_busy: 409,
  /** An edge batch refers to kept contents the centre lacks; `details.missing_blobs` names them (send them along). */
  missing_blobs: 409,
  /** An edge batch is for a session another edge (or the centre itself) owns; nothing was stored. */
  session_conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  git_failed: 500,
  git_timeout: 500,
  git_missing: 500,
  /** The database refused a write (disk full, read-only, I/O error); `details.sqlite_code` says which. */
  storage_failed: 500,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The body of every error response: `{error: {code, message, hint?, details?}}`. */
export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    hint?: string;
    details?: Record<string, unknown>;
  };
}
