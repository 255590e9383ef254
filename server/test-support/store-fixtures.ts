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

/** A modified file's row with its patch (counts as given, sizes the same unless said). */
export function modifiedFile(p: string, patch: string, lines: number, extra: Partial<NewFile> = {}): NewFile {
  return storedFile(p, {
    change_type: 'modified',
    additions: lines,
    deletions: lines,
    size_before: 4000,
    size_after: 4000,
    patch,
    patch_bytes: Buffer.byteLength(patch),
    ...extra,
  });
}

/** A change made only of `files` (modified), its counts and patch total taken from them. */
export function modifiedChange(
  sessionId: string,
  runId: string,
  createdAt: number,
  files: NewFile[],
  extra: Partial<NewChange> = {},
): { change: NewChange; files: NewFile[] } {
  return {
    files,
    change: storedChange(sessionId, runId, createdAt, {
      changed_count: files.length,
      added_count: 0,
      modified_count: files.length,
      total_patch_bytes: files.reduce((n, f) => n + f.patch_bytes, 0),
      ...extra,
    }),
  };
}
