import type {
  ChangeSummary,
  DiffCompletedPayload,
  DiffProgressPayload,
  FileSummary,
  Message,
  Run,
  Session,
  SessionDetailResponse,
  ToolCall,
} from '../../../shared/index.ts';

/**
 * Everything one open session page shows, kept up to date by socket reducers. The reducers mutate
 * the state they are given (a Pinia `reactive` object in the app, a plain object in tests).
 */
export interface SessionState {
  session: Session | null;
  /** Oldest first. */
  messages: Message[];
  runs: Run[];
  toolCalls: ToolCall[];
  /** Oldest first; one per change_id. */
  changes: ChangeSummary[];
  /** Live feed per change_id while its run or tool call is open. */
  progress: Record<string, DiffProgressPayload>;
  /** change_ids known only from a socket payload (no sizes yet): refetched as full summaries. */
  partial: string[];
  deleted: boolean;
}

export function emptySessionState(): SessionState {
  return {
    session: null,
    messages: [],
    runs: [],
    toolCalls: [],
    changes: [],
    progress: {},
    partial: [],
    deleted: false,
  };
}

export function loadDetail(state: SessionState, detail: SessionDetailResponse): void {
  state.session = detail.session;
  state.messages = [...detail.messages];
  state.runs = [...detail.runs];
  state.toolCalls = [...detail.tool_calls];
  state.changes = [...detail.changes];
  state.progress = {};
  state.partial = [];
  state.deleted = false;
}

/**
 * Older messages from a later page go in front; ids already present are kept as they are.
 * Returns how many were new.
 */
export function prependMessages(state: SessionState, older: readonly Message[]): number {
  const known = new Set(state.messages.map((m) => m.id));
  const fresh = older.filter((m) => !known.has(m.id));
  // A stable sort keeps the server's order among messages stamped in the same millisecond.
  state.messages = [...fresh, ...state.messages].sort((a, b) => a.created_at - b.created_at);
  return fresh.length;
}

/**
 * The `messages_before` cursor for the next older page. The server returns messages created
 * strictly before it, so asking for one millisecond past the oldest shown message also returns the
 * ones that share its millisecond (duplicates are dropped by `prependMessages`).
 */
export function olderMessagesCursor(state: SessionState): number | null {
  const oldest = state.messages[0];
  return oldest ? oldest.created_at + 1 : null;
}

/** message.created / message.updated: a repeated id replaces the message (streamed replies). */
export function applyMessage(state: SessionState, message: Message): void {
  const i = state.messages.findIndex((m) => m.id === message.id);
  if (i >= 0) {
    state.messages[i] = message;
    return;
  }
  // Keep oldest-first order; a message stamped earlier than the newest one is slotted in.
  let at = state.messages.length;
  while (at > 0 && state.messages[at - 1]!.created_at > message.created_at) at--;
  state.messages.splice(at, 0, message);
}

/** run.started / run.completed / run.failed. */
export function applyRun(state: SessionState, run: Run): void {
  const i = state.runs.findIndex((r) => r.run_id === run.run_id);
  if (i >= 0) state.runs[i] = run;
  else state.runs.push(run);
  if (run.status !== 'running') delete state.progress[run.change_id];
}

/** tool.started / tool.completed. */
export function applyToolCall(state: SessionState, call: ToolCall): void {
  const i = state.toolCalls.findIndex((t) => t.tool_call_id === call.tool_call_id);
  if (i >= 0) state.toolCalls[i] = call;
  else state.toolCalls.push(call);
  if (call.status !== 'running') delete state.progress[call.change_id];
}

export function applyProgress(state: SessionState, p: DiffProgressPayload): void {
  state.progress[p.change_id] = p;
}

/** A full summary (from REST) replaces whatever is known of that change. */
export function applyChange(state: SessionState, change: ChangeSummary): void {
  const i = state.changes.findIndex((c) => c.change_id === change.change_id);
  if (i >= 0) state.changes[i] = change;
  else state.changes.push(change);
  state.partial = state.partial.filter((id) => id !== change.change_id);
}

/**
 * workspace.diff.completed: a summary from the socket payload, shown at once; it lacks sizes and
 * per-kind counts, so it is marked partial until the full summary is fetched.
 * A payload for a change already stored in full is ignored (a repeated event).
 */
export function applyDiffCompleted(state: SessionState, p: DiffCompletedPayload): boolean {
  const existing = state.changes.find((c) => c.change_id === p.change_id);
  if (existing && !state.partial.includes(p.change_id)) return false;
  applyChange(state, changeFromPayload(p));
  state.partial.push(p.change_id);
  delete state.progress[p.change_id];
  return true;
}

export function changeFromPayload(p: DiffCompletedPayload): ChangeSummary {
  const files: FileSummary[] = p.files.map((f) => ({
    ...f,
    size_before: null,
    size_after: null,
    patch_bytes: 0,
  }));
  const count = (t: FileSummary['change_type']) => files.filter((f) => f.change_type === t).length;
  return {
    change_id: p.change_id,
    session_id: p.session_id,
    run_id: p.run_id,
    tool_call_id: p.tool_call_id,
    source: p.source,
    workspace: null,
    workspace_kind: 'git',
    started_at: null,
    finished_at: null,
    changed_count: p.changed_count,
    added_count: count('added'),
    modified_count: count('modified'),
    deleted_count: count('deleted'),
    renamed_count: count('renamed'),
    binary_count: files.filter((f) => f.binary).length,
    truncated: p.truncated,
    truncated_reasons: [],
    total_patch_bytes: 0,
    overlapping: p.overlapping,
    omitted_count: p.omitted_count,
    created_at: Date.now(),
    total_additions: p.total_additions,
    total_deletions: p.total_deletions,
    files,
    ...(p.next_file_cursor !== undefined ? { files_total: p.files_total, next_file_cursor: p.next_file_cursor } : {}),
  };
}
