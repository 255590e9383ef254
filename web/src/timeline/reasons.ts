import type { OmittedReason, TruncatedReason, UntrackedReason } from '../../../shared/index.ts';

/** Why a run or tool call was not tracked, in words a user understands. */
const UNTRACKED_WORDS: Record<UntrackedReason, string> = {
  workspace_missing: 'the workspace folder does not exist',
  workspace_not_directory: 'the workspace path is not a folder',
  workspace_not_allowed: 'the workspace is outside the folders rundiff may track',
  workspace_unreadable: 'the workspace folder could not be read',
  no_workspace: 'no workspace folder was given for it',
  no_checkpoint: 'the server restarted during the run, so its changes were not recorded',
};

export function untrackedReasonText(reason: string | null): string {
  if (reason === null) return 'no reason was given';
  return (UNTRACKED_WORDS as Record<string, string>)[reason] ?? reason.replace(/_/g, ' ');
}

/** Why a file's patch is null (`patch unavailable: <words>`). */
const OMITTED_WORDS: Record<OmittedReason, string> = {
  binary: 'binary file',
  too_large: 'the file is too large to snapshot',
  too_complex: 'the diff was too complex to compute in time',
  budget: "the change's patch size budget went to smaller patches first",
  no_snapshot: 'no copy of the earlier content was kept',
  unreadable: 'the file could not be read (no permission, or not a regular file)',
};

export function omittedReasonText(reason: string | null): string {
  if (reason === null) return 'no patch was stored';
  return (OMITTED_WORDS as Record<string, string>)[reason] ?? reason.replace(/_/g, ' ');
}

/**
 * Change-level truncation notes. `file_patch` is shown on each row, so it needs no sentence of its
 * own; `rows` (paths past the stored-row bound) says how many paths have no row and which setting
 * bounds them, next to the `+N more files` count.
 */
const TRUNCATED_WORDS: Partial<Record<TruncatedReason, string>> = {
  scan_files: 'the workspace has more files than the scan limit, so some files were not checked',
  scan_time: 'the scan ran out of time, so some files were not checked',
  run_budget: "the run's patch size budget was used up; some patches were not stored",
  memory_cap: 'the memory cap for checkpoints was reached; some files were compared without a snapshot',
  git_timeout: 'git did not answer in time; the result may be incomplete',
  degraded: 'tracking ran in a degraded mode; the result may be incomplete',
};

/** The sentence for `rows`: `3 changed paths were not stored: ...` (`omittedCount` 0: not known). */
export function rowsBoundNote(omittedCount: number): string {
  const what =
    omittedCount > 0
      ? `${omittedCount.toLocaleString('en-US')} changed ${omittedCount === 1 ? 'path was' : 'paths were'}`
      : 'some changed paths were';
  return `${what} not stored: the change has more than the stored-row bound (RUNDIFF_MAX_CHANGED_FILES) allows`;
}

export function truncatedNotes(reasons: readonly string[], omittedCount = 0): string[] {
  const notes: string[] = [];
  for (const r of reasons) {
    if (r === 'file_patch') continue;
    if (r === 'rows') notes.push(rowsBoundNote(omittedCount));
    else notes.push((TRUNCATED_WORDS as Record<string, string>)[r] ?? r.replace(/_/g, ' '));
  }
  return notes;
}
