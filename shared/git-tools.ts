/** Git tools for agents, docs/contract.md section 5: inputs and outputs shared by REST, MCP and the web UI. */
import type { ChangeSummary, UntrackedReason } from './dto.ts';

export type GitToolName =
  'git_status' | 'git_diff' | 'git_log' | 'git_show' | 'git_branch' | 'git_commit' | 'run_changes';

export const GIT_TOOL_NAMES: readonly GitToolName[] = [
  'git_status',
  'git_diff',
  'git_log',
  'git_show',
  'git_branch',
  'git_commit',
  'run_changes',
];

/** Every tool takes `repository?`: a label, a root path or a unique folder name. */
export interface RepositoryInput {
  repository?: string;
  /** REST only: the rundiff session whose workspace is the default repository. */
  session_id?: string;
}

/** git's porcelain letters. */
export type PorcelainLetter = '.' | 'M' | 'A' | 'D' | 'R' | 'C' | 'T' | 'U' | '?';

export interface GitStatusFile {
  path: string;
  old_path: string | null;
  index: PorcelainLetter;
  worktree: PorcelainLetter;
  path_base64?: string;
}

export interface GitStatusOutput {
  branch: string | null;
  upstream: string | null;
  ahead: number;
  behind: number;
  detached: boolean;
  unborn: boolean;
  /** `merge`, `rebase`, `cherry-pick`, `revert`, `bisect`, or null. */
  in_progress: string | null;
  clean: boolean;
  staged: string[];
  unstaged: string[];
  untracked: string[];
  conflicted: string[];
  files: GitStatusFile[];
}

export interface GitDiffInput extends RepositoryInput {
  staged?: boolean;
  path?: string;
  /** A ref or `A..B`. */
  spec?: string;
  offset?: number;
  /** Patch text budget (bytes). Default 65,536, max 1,048,576. */
  max_bytes?: number;
}

export interface GitDiffFile {
  path: string;
  old_path: string | null;
  additions: number;
  deletions: number;
  binary: boolean;
  /** Only for names that are not valid UTF-8: the raw bytes of `path`, base64. */
  path_base64?: string;
  old_path_base64?: string;
}

/**
 * Why a file's patch is not (fully) in this page of `git_diff`: `budget` = not reached yet, follow
 * `next_offset`; `too_large` = beyond the text one diff may hold (16 MiB), narrow it with `path`;
 * `unreadable` = an untracked file that could not be read; `nested_repository` = an untracked folder
 * that is a repository of its own.
 */
export type GitDiffOmittedReason = 'budget' | 'too_large' | 'unreadable' | 'nested_repository';

export interface GitDiffOmitted {
  path: string;
  reason: GitDiffOmittedReason;
  path_base64?: string;
}

export interface GitDiffOutput {
  diff: string;
  files_changed: number;
  files: GitDiffFile[];
  truncated: boolean;
  omitted: GitDiffOmitted[];
  next_offset: number | null;
}

export interface GitLogInput extends RepositoryInput {
  range?: string;
  path?: string;
  /** Default 20, max 200. */
  limit?: number;
}

export interface GitCommitInfo {
  hash: string;
  parents: string[];
  author_name: string;
  author_email: string;
  date: string;
  subject: string;
}

export interface GitLogOutput {
  commits: GitCommitInfo[];
}

export interface GitShowInput extends RepositoryInput {
  ref: string;
  path?: string;
}

export interface GitShowOutput {
  commit: GitCommitInfo & { body: string };
  files: GitDiffFile[];
  diff: string;
  truncated: boolean;
}

export interface GitBranchOutput {
  current: string | null;
  detached: boolean;
  branches: { name: string; upstream: string | null }[];
}

export interface GitCommitInput extends RepositoryInput {
  message: string;
  paths?: string[];
}

/** What a commit is about to do: shown to a person when commit approval is on. */
export interface CommitPlanFile {
  path: string;
  /** Line counts as git's numstat gives them; 0 and 0 for a binary file. */
  additions: number;
  deletions: number;
  /** True for a file the commit adds (not in HEAD). */
  new: boolean;
  /** git counts no lines for it (numstat `- -`, or an untracked file git would call binary). */
  binary: boolean;
}

export interface CommitPlan {
  /** The repository's label. */
  repository: string;
  message: string;
  /**
   * `staged`: the commit records HEAD against the index; `paths`: HEAD against the work tree for its
   * files. Null only in a plan posted by a client that did not say.
   */
  commit: 'staged' | 'paths' | null;
  files: CommitPlanFile[];
}

export interface GitCommitOutput {
  hash: string;
  summary: string;
  files: { path: string; additions: number; deletions: number }[];
}

export type GitStatusInput = RepositoryInput;
export type GitBranchInput = RepositoryInput;

export interface RunChangesInput {
  session_id: string;
  run_id?: string;
  /** The `next_cursor` of the previous answer. Default: from the first file. */
  cursor?: string;
  /** Files per answer (count). Default 50 (FIRST_FILES_PAGE), at most 1,000 (FILES_PAGE_MAX). */
  limit?: number;
}

export interface RunChangesOutput {
  /** The run's change; its `files` is the page asked for (`cursor`, `limit`), in path order. */
  change: ChangeSummary;
  /** True while the run is still going: `change` is the delta so far, computed now and not stored. */
  open: boolean;
  /** False when the run's workspace was not tracked: `change` then says nothing about the files. */
  tracking: boolean;
  /** Why it was not tracked (`workspace_missing`, `no_checkpoint`, ...), else null. */
  reason: UntrackedReason | null;
  /** Files that can be paged: stored rows (`changed_count - omitted_count`), or the open run's delta so far. */
  files_total: number;
  /** The `cursor` for the next page, or null on the last one. */
  next_cursor: string | null;
}

export interface ToolCallRecord {
  id: string;
  tool: GitToolName;
  repository: string | null;
  ok: boolean;
  error_code: string | null;
  duration_ms: number;
  created_at: number;
  /**
   * The call's input as JSON, at most MAX_CALL_ARGUMENTS_CHARS characters (longer input is cut and
   * ends with `…`); null for calls recorded before arguments were kept.
   */
  arguments: string | null;
  /** A commit's hash and git's summary line; null for every other call and for a refused commit. */
  commit: { hash: string; summary: string } | null;
}

/** Longest `arguments` text kept per logged call (characters). */
export const MAX_CALL_ARGUMENTS_CHARS = 2000;

export interface ToolCallsResponse {
  calls: ToolCallRecord[];
}
