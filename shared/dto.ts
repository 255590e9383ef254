/** REST shapes of docs/contract.md section 3. All field names snake_case, times epoch ms. */
import { fieldsOf } from './pick.ts';
import type { ContentStoreStats } from './revert.ts';

export type ChangeType = 'added' | 'modified' | 'deleted' | 'renamed';
export type WorkspaceKind = 'git' | 'filesystem';
/** `revert`: a run rundiff itself recorded while undoing another run's change. */
export type RunSource = 'run' | 'workflow' | 'coding-agent' | 'revert';
/** `source` of a stored change: a whole run's source, or `tool` for one tool call. */
export type ChangeSource = RunSource | 'tool';
export type RunStatus = 'running' | 'completed' | 'failed';
export type MessageRole = 'user' | 'assistant' | 'tool';

/** Why a bound cut a change short (docs/contract.md section 3, `truncated_reasons`). */
export type TruncatedReason =
  'scan_files' | 'scan_time' | 'rows' | 'file_patch' | 'run_budget' | 'memory_cap' | 'git_timeout' | 'degraded';

export const TRUNCATED_REASONS: readonly TruncatedReason[] = [
  'scan_files',
  'scan_time',
  'rows',
  'file_patch',
  'run_budget',
  'memory_cap',
  'git_timeout',
  'degraded',
];

/**
 * Why a file's patch is null. `unreadable`: one side of the file is there but could not be read
 * (permission denied, no longer a regular file, or a folder on its path led outside the workspace);
 * the row keeps its type as best known and is never reported `deleted` for it.
 */
export type OmittedReason = 'binary' | 'too_large' | 'too_complex' | 'budget' | 'no_snapshot' | 'unreadable';

/** Why a run or tool call is not tracked. */
export type UntrackedReason =
  | 'workspace_missing'
  | 'workspace_not_directory'
  | 'workspace_not_allowed'
  | 'workspace_unreadable'
  | 'no_workspace'
  | 'no_checkpoint';

export interface Session {
  id: string;
  title: string | null;
  workspace: string | null;
  created_at: number;
  updated_at: number;
  run_count: number;
  /**
   * Distinct paths changed by the session's run-level changes: a file changed by several runs
   * (overlapping or not) counts once. Files a change did not store (past the stored-files limit,
   * its `omitted_count`) cannot be told apart and are added as they are.
   */
  changed_count: number;
  /** Runs of the session that failed. */
  failed_run_count: number;
  /** Runs of the session still running. */
  running_run_count: number;
  /** Status of the session's latest run (by start time); null when it has none. */
  last_run_status: RunStatus | null;
  /** The sum of its runs' `usage` (those that have one); null when no run has one. */
  usage: RunUsage | null;
}

/**
 * The tokens a run's model calls used, as the agent itself reported them (Claude Code: its
 * transcript's assistant messages): `input` not read from the cache, `output`, `cache_read`,
 * `cache_write` (written to the prompt cache), and what they cost in US dollars where the agent
 * itself priced them (`cost_usd`: opencode, a bridge client). Never estimated.
 */
export interface RunUsage {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
  /**
   * US dollars, as the agent reported them; absent when it priced nothing (or only at zero, which
   * is what an agent says when it knows no price). A session's is the sum over its priced runs.
   */
  cost_usd?: number;
}

/** The most US dollars one run may report (a bound on what is stored, not a price). */
export const MAX_RUN_COST_USD = 1_000_000_000;

/** `status` filter of the sessions list: which runs a session must have. */
export type SessionStatusFilter = 'running' | 'failed' | 'completed' | 'none';

/** Filters of `GET /api/hermes/sessions`; every field is optional and they combine with AND. */
export interface SessionFilter {
  /** Case-insensitive (ASCII) substring of the title or the workspace. */
  q?: string;
  status?: SessionStatusFilter;
  /** Exact workspace path. */
  workspace?: string;
  /** Sessions active at or after this time (ms since epoch): `updated_at >= from`. */
  from?: number;
  /** Sessions that began at or before this time (ms since epoch): `created_at <= to`. */
  to?: number;
}

/** One workspace of `GET /api/hermes/workspaces`: a path sessions name and how many do. */
export interface WorkspaceCount {
  workspace: string;
  session_count: number;
}

/** Distinct workspaces listed at most by `GET /api/hermes/workspaces` (the most used first). */
export const WORKSPACES_MAX = 500;

/** `GET /api/hermes/workspaces`: the workspaces of every stored session, for the sessions filter. */
export interface WorkspacesResponse {
  /** In path order. */
  workspaces: WorkspaceCount[];
  /** More distinct workspaces exist than `WORKSPACES_MAX`: the least used were left out. */
  truncated: boolean;
}

export interface Message {
  id: string;
  session_id: string;
  role: MessageRole;
  content: string;
  run_id: string | null;
  tool_call_id: string | null;
  created_at: number;
}

export interface Run {
  run_id: string;
  session_id: string;
  /** The run's own title (`rundiff run --title`, the bridge's `run.started` `title`); null: none given. */
  title: string | null;
  status: RunStatus;
  source: RunSource;
  workspace: string | null;
  started_at: number;
  finished_at: number | null;
  error: string | null;
  change_id: string;
  tracking: boolean;
  reason: UntrackedReason | null;
  /** Tokens the run used, as its agent reported them; null when the agent reported none. */
  usage: RunUsage | null;
}

export interface ToolCall {
  tool_call_id: string;
  run_id: string;
  session_id: string;
  name: string | null;
  status: RunStatus;
  started_at: number;
  finished_at: number | null;
  error: string | null;
  change_id: string;
  tracking: boolean;
  reason: UntrackedReason | null;
}

/**
 * The `error` of a run or tool call closed without its own completion: it is `failed` with this
 * text, and its change is what changed in the workspace from its start to the moment it was closed.
 * `TOOL_ENDED_WITH_RUN`: a tool call whose run ended first (no end was ever reported for it);
 * `SESSION_NO_LONGER_FOLLOWED`: the server stopped following the agent session (the least recently
 * used of too many at once) and closed what it had open.
 */
export const TOOL_ENDED_WITH_RUN = 'the agent reported no end for this tool call before its turn ended';
export const SESSION_NO_LONGER_FOLLOWED =
  'not reported: the agent session was no longer followed (the least recently used of too many), so what it had open was closed';
/**
 * The `error` of a tool call closed by a hook payload that was over the body limit: only the
 * payload's identifying top-level fields were read, so the tool's own answer is not known.
 */
export const hookBodyOverLimit = (bytes: number): string =>
  `the hook payload was over the body limit (${bytes} bytes); the tool's answer was not read`;

/** The error a tool call gets when its `tool.completed` bridge event was over the body limit. */
export const bridgeBodyOverLimit = (bytes: number): string =>
  `the tool.completed event was over the body limit (${bytes} bytes); the tool's answer was not read`;

export interface FileSummary {
  id: string;
  path: string;
  old_path: string | null;
  change_type: ChangeType;
  additions: number;
  deletions: number;
  binary: boolean;
  truncated: boolean;
  size_before: number | null;
  size_after: number | null;
  /** UTF-8 size of the stored patch (0 when none). */
  patch_bytes: number;
  omitted_reason: OmittedReason | null;
  /** Only for names that are not valid UTF-8: the raw bytes, base64. */
  path_base64?: string;
  old_path_base64?: string;
}

/**
 * The fields of a changed file shared by every view of it (stored row, completion answer, REST),
 * in the order they are served; `id` comes first and the base64 names, when present, last.
 */
export const FILE_SUMMARY_FIELDS = fieldsOf<Omit<FileSummary, 'id' | 'path_base64' | 'old_path_base64'>>()([
  'path',
  'old_path',
  'change_type',
  'additions',
  'deletions',
  'binary',
  'truncated',
  'size_before',
  'size_after',
  'patch_bytes',
  'omitted_reason',
]);

export interface FileWithPatch extends FileSummary {
  patch: string | null;
}

/**
 * Why `?whitespace=ignore` answered the stored patch instead: the content store holds no bytes
 * for a side (`not_stored`), a side is binary or not UTF-8 text, the diff did not finish within
 * the per-file budget (`too_complex`), or the row has no stored patch to begin with (`no_patch`).
 */
export type WhitespaceFallback = 'not_stored' | 'binary' | 'not_utf8' | 'too_complex' | 'no_patch';

/** `GET .../files/:fileId`: one file with its patch; the `whitespace_*` fields only with `?whitespace=ignore`. */
export interface FileResponse {
  file: FileWithPatch;
  /** True: `file.patch` was computed again from the stored sides with all whitespace ignored. */
  whitespace_ignored?: boolean;
  /** With `whitespace_ignored: false`, why the stored patch was sent. */
  whitespace_reason?: WhitespaceFallback | null;
  /**
   * True: the row's stored patch fell short (left out for the change's patch budget, or cut at the
   * per-file bound) and `file.patch` is the whole patch computed from the kept contents
   * (`omitted_reason` null, `truncated` only past RUNDIFF_MAX_OPENED_PATCH_BYTES); the counts are the row's.
   */
  patch_from_contents?: boolean;
  /**
   * With `patch_from_contents`: git's patch of a file whose text is not valid UTF-8 (Latin-1, say),
   * as base64 of its bytes; `file.patch` then shows those bytes decoded with U+FFFD (`�`) for each
   * invalid sequence, for reading. These bytes are what `git apply` takes (the whole-run patch has them).
   */
  patch_base64?: string;
}

/** Which recorded side of a changed file: at the checkpoint (`before`) or at completion (`after`). */
export type ContentSide = 'before' | 'after';

/**
 * `GET .../files/:fileId/content?side=`: one side of a changed file as the change recorded it
 * (docs/contract.md section 3; defined for the web UI, not served yet). `text` is null when
 * `omitted_reason` says why.
 */
export interface FileContent {
  file_id: string;
  side: ContentSide;
  text: string | null;
  /** Bytes on that side, when known. */
  size: number | null;
  omitted_reason: null | 'binary' | 'too_large' | 'not_stored' | 'absent';
}

export interface ChangeSummary {
  change_id: string;
  session_id: string;
  run_id: string;
  tool_call_id: string | null;
  source: ChangeSource;
  workspace: string | null;
  workspace_kind: WorkspaceKind;
  started_at: number | null;
  finished_at: number | null;
  changed_count: number;
  added_count: number;
  modified_count: number;
  deleted_count: number;
  renamed_count: number;
  binary_count: number;
  truncated: boolean;
  truncated_reasons: TruncatedReason[];
  total_patch_bytes: number;
  overlapping: boolean;
  /** Changed files not stored as rows (exact count). */
  omitted_count: number;
  created_at: number;
  /**
   * Lines added and deleted over every stored row (not only `files`, the first page): what the
   * change's heading totals. Counted when the change is stored; for a change stored by an older
   * release, summed from its rows when read.
   */
  total_additions: number;
  total_deletions: number;
  /** The stored rows in path order: every one, or only the first FIRST_FILES_PAGE when paged. */
  files: FileSummary[];
  /**
   * Present only when `files` is the first page of more: the stored rows in all
   * (`changed_count - omitted_count`) and the `after` cursor of `GET .../files` for the next page.
   * Absent, `files` is every stored row (as answers always were before paging).
   */
  files_total?: number;
  next_file_cursor?: string;
}

/** Rows a change summary, the session detail and `workspace.diff.completed` carry; the rest are paged. */
export const FIRST_FILES_PAGE = 50;
/** Rows per page of `GET .../workspace-run-changes/:changeId/files` by default, and at most. */
export const FILES_PAGE_DEFAULT = 200;
export const FILES_PAGE_MAX = 1_000;

/** `GET .../workspace-run-changes/:changeId/files`: a page of stored rows in path order. */
export interface ChangeFilesPage {
  files: FileSummary[];
  files_total: number;
  next_file_cursor: string | null;
}

export interface SessionListResponse {
  sessions: Session[];
  next_before: number | null;
}

export interface SessionDetailResponse {
  session: Session;
  messages: Message[];
  runs: Run[];
  tool_calls: ToolCall[];
  changes: ChangeSummary[];
}

export interface HealthResponse {
  ok: true;
  version: string;
  /** Bytes kept for undoing runs (absent when the server has no store, e.g. a bare test app). */
  content_store?: ContentStoreStats;
  /** inotify watches the server process holds, against the per-user system limit (absent where there are none to count: not Linux). */
  inotify?: InotifyStats;
}

export interface InotifyStats {
  /** Watches held by every watcher in the process (the kernel's count, not an estimate). */
  watches: number;
  /** `fs.inotify.max_user_watches`, shared by every process of the user; null when unreadable. */
  limit: number | null;
}

/**
 * Something in an agent's setup on the server's machine that keeps its runs from being recorded,
 * said where a person looks (the sessions list, that agent's sessions): `GET /api/agents/notices`.
 */
export interface AgentSetupNotice {
  /** The agent, as sessions name it (`codex`). */
  agent: string;
  /** `hooks_untrusted`: the agent skips rundiff's hooks until a person trusts them; `hooks_disabled`: some are turned off. */
  code: 'hooks_untrusted' | 'hooks_disabled';
  /** What is wrong and what it means for the record, one sentence. */
  message: string;
  /** What the person does about it. */
  fix: string;
  /** The agent's file that says so. */
  file: string;
}

export interface AgentSetupNoticesResponse {
  notices: AgentSetupNotice[];
}
