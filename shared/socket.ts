/** socket.io event maps of docs/contract.md section 4 (default namespace). */
import type { ChangeSummary, FileSummary, Message, Run, Session, ToolCall } from './dto.ts';
import type {
  CommentDeletedPayload,
  CommentUpdatedPayload,
  ReviewDeletedPayload,
  ReviewUpdatedPayload,
} from './review.ts';
import type { ViewedUpdatedPayload } from './viewed.ts';

/** The fields of a changed file in `workspace.diff.completed`, in the order they are sent. */
export const DIFF_COMPLETED_FILE_FIELDS = [
  'id',
  'path',
  'old_path',
  'change_type',
  'additions',
  'deletions',
  'binary',
  'truncated',
  'omitted_reason',
] as const satisfies readonly (keyof FileSummary)[];

export type DiffCompletedFile = Pick<FileSummary, (typeof DIFF_COMPLETED_FILE_FIELDS)[number]>;

export interface DiffCompletedPayload extends Pick<
  ChangeSummary,
  | 'session_id'
  | 'run_id'
  | 'change_id'
  | 'changed_count'
  | 'truncated'
  | 'source'
  | 'tool_call_id'
  | 'overlapping'
  | 'omitted_count'
  | 'files_total'
  | 'next_file_cursor'
  | 'total_additions'
  | 'total_deletions'
> {
  event: 'workspace.diff.completed';
  files: DiffCompletedFile[];
}

/**
 * How the live feed follows a run: `watch` (folder watches report each touched path as it happens)
 * or `poll` (the run's changed paths are checked periodically, where watching is not possible).
 */
export type LiveFeedMode = 'watch' | 'poll';

export interface DiffProgressPayload extends Pick<ChangeSummary, 'session_id' | 'run_id' | 'change_id'> {
  available: boolean;
  /** Present when `available`. */
  mode?: LiveFeedMode;
  /**
   * With `available: false`, why the feed is off (`check_failed`, or a watch failure where no
   * periodic check exists); with `mode: 'poll'`, why the feed is not watching (`watch_budget`,
   * `watch_limit`, `watch_failed`, `too_many_events`, `too_many_paths`).
   */
  reason?: string;
  /** With `mode: 'poll'`: the pause before the next check (ms, whole seconds, at least 1,000). */
  check_interval_ms?: number;
  /** Touched paths, most recently touched first; at most 200 (`touched_count` stays exact). */
  touched: string[];
  touched_count: number;
}

export interface ApprovalFile {
  path: string;
  /** Line counts as git's numstat gives them; 0 and 0 for a binary file. */
  additions: number;
  deletions: number;
  new: boolean;
  /** git counts no lines for it (`- -` in numstat). */
  binary: boolean;
}

/**
 * What a commit records, so its diff can be shown as it will land: `staged` (no `paths`) is HEAD
 * against the index; `paths` is HEAD against the work tree for the plan's files. Null when the
 * client that posted the plan did not say.
 */
export type ApprovalCommitKind = 'staged' | 'paths';

/** Who asks for a commit, as far as the caller said: each field is null when unknown. */
export interface ApprovalRequester {
  /** The rundiff session the commit belongs to (`session_id` of the git_commit call). */
  session_id: string | null;
  /** That session's title when it has one. */
  session_title: string | null;
  /** The agent or client asking (`agent` of a REST call; an MCP client's own name). */
  agent: string | null;
}

export interface ApprovalRequestedPayload extends ApprovalRequester {
  approval_id: string;
  repository: string;
  message: string;
  commit: ApprovalCommitKind | null;
  files: ApprovalFile[];
  created_at: number;
  /** When it times out (epoch ms). */
  expires_at: number;
}

/** Longest reason a person may give with a denial (characters). */
export const MAX_DENY_REASON_CHARS = 2000;

export interface ApprovalResolvedPayload {
  approval_id: string;
  /** `cancelled`: the caller went away (or the server stopped) before anyone decided. */
  decision: 'approve' | 'deny' | 'timeout' | 'cancelled';
  /** A denial's reason as the person wrote it; null when none was given or for other outcomes. */
  reason: string | null;
}

/** A plan still waiting for a decision (`GET /api/tools/approvals`, an extension for pages opened later). */
export type PendingApproval = ApprovalRequestedPayload;

export interface PendingApprovalsResponse {
  approvals: PendingApproval[];
}

export interface Ack {
  ok: boolean;
  error?: { code: string; message: string };
}

export interface ServerToClientEvents {
  'workspace.diff.completed': (p: DiffCompletedPayload) => void;
  'workspace.diff.progress': (p: DiffProgressPayload) => void;
  'run.started': (p: { session_id: string; run: Run }) => void;
  'run.completed': (p: { session_id: string; run: Run }) => void;
  'run.failed': (p: { session_id: string; run: Run }) => void;
  'tool.started': (p: { session_id: string; tool_call: ToolCall }) => void;
  'tool.completed': (p: { session_id: string; tool_call: ToolCall }) => void;
  'message.created': (p: { session_id: string; message: Message }) => void;
  'message.updated': (p: { session_id: string; message: Message }) => void;
  'session.updated': (p: { session: Session }) => void;
  'session.deleted': (p: { session_id: string }) => void;
  'tool.approval.requested': (p: ApprovalRequestedPayload) => void;
  'tool.approval.resolved': (p: ApprovalResolvedPayload) => void;
  'comment.updated': (p: CommentUpdatedPayload) => void;
  'comment.deleted': (p: CommentDeletedPayload) => void;
  'review.updated': (p: ReviewUpdatedPayload) => void;
  'review.deleted': (p: ReviewDeletedPayload) => void;
  'viewed.updated': (p: ViewedUpdatedPayload) => void;
}

export interface ClientToServerEvents {
  'session.subscribe': (p: { session_id: string }, ack: (a: Ack) => void) => void;
  'session.unsubscribe': (p: { session_id: string }, ack: (a: Ack) => void) => void;
  'sessions.subscribe': (p: Record<string, never>, ack: (a: Ack) => void) => void;
}

export type ServerEventName = keyof ServerToClientEvents;
