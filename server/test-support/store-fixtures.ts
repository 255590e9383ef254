import type { NewChange, NewFile } from '../store/index.ts';

/**
 * A change summary and its file rows as a completion hands them to the store, for store-level tests:
 * one added file by default, every field overridable.
 */
export function storedChange(
  sessionId: string,
  runId: string,
  createdAt: number,
  extra: Partial<NewChange> = {},
): NewChange {
  return {
    change_id: `run:${runId}`,
    session_id: sessionId,
    run_id: runId,
    tool_call_id: null,
    source: 'run',
    workspace: '/w',
    workspace_kind: 'git',
    started_at: createdAt - 10,
    finished_at: createdAt,
    changed_count: 1,
    added_count: 1,
    modified_count: 0,
    deleted_count: 0,
    renamed_count: 0,
    binary_count: 0,
    truncated: false,
    truncated_reasons: [],
    total_patch_bytes: 10,
    overlapping: false,
    omitted_count: 0,
    created_at: createdAt,
    ...extra,
  };
}

/** One file row of a stored change (an added one-line file by default). */
export function storedFile(p: string, extra: Partial<NewFile> = {}): NewFile {
  return {
    path: p,
    old_path: null,
    change_type: 'added',
    additions: 1,
    deletions: 0,
    binary: false,
    truncated: false,
    size_before: null,
    size_after: 2,
    patch_bytes: 10,
    omitted_reason: null,
    patch: `diff --git a/${p} b/${p}\n`,
    ...extra,
  };
}
