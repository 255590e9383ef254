import {
  runChangeId,
  toolChangeId,
  type ChangeSource,
  type Run,
  type RunSource,
  type ToolCall,
} from '../../shared/index.ts';
import type { ActivityKind, NewActivity, Recorded } from '../store/index.ts';
import type { RecorderEmitter } from './emitter.ts';

/**
 * A run or a tool call: the same thing at two scopes (record, checkpoint, close, store, emit).
 * `id` is the activity's own id (`run_id` or `tool_call_id`); `runId` is the run itself or the run a
 * tool call belongs to (the checkpoint TTL is kept per run).
 */
export interface Activity {
  kind: ActivityKind;
  sessionId: string;
  runId: string;
  id: string;
  changeId: string;
}

export const runActivity = (sessionId: string, runId: string): Activity => ({
  kind: 'run',
  sessionId,
  runId,
  id: runId,
  changeId: runChangeId(runId),
});

export const toolActivity = (sessionId: string, runId: string, toolCallId: string): Activity => ({
  kind: 'tool',
  sessionId,
  runId,
  id: toolCallId,
  changeId: toolChangeId(toolCallId),
});

export const toolCallIdOf = (a: Activity): string | null => (a.kind === 'tool' ? a.id : null);

/** For log lines. */
export const nameOf = (a: Activity): string => (a.kind === 'tool' ? 'tool call' : 'run');

/** The fields a start may give beyond the ids. */
export interface StartFields {
  workspace?: string;
  source?: RunSource;
  name?: string;
  /**
   * In-process starts only (a revert run): asked with the workspace's resolved real path once the
   * checkpoint is taken, right before the start is answered; false means the checkpoint may not
   * be of the folder the caller holds (a folder above it was swapped), so it is dropped and the
   * start answered untracked (`workspace_missing`).
   */
  sameFolder?: (root: string) => boolean;
  /** A run's own title. */
  title?: string;
}

/** The record of an activity when first seen: running, not (yet) tracked. */
export function newRecord(
  a: Activity,
  t: number,
  workspace: string | null,
  f: StartFields = {},
): NewActivity<ActivityKind> {
  const common = {
    session_id: a.sessionId,
    status: 'running',
    workspace,
    started_at: t,
    finished_at: null,
    error: null,
    change_id: a.changeId,
    tracking: false,
    reason: null,
  } as const;
  return a.kind === 'run'
    ? { run_id: a.id, title: f.title ?? null, source: f.source ?? 'run', ...common }
    : { tool_call_id: a.id, run_id: a.runId, name: f.name ?? null, ...common };
}

/** `source` of the activity's stored change: the run's own source, or `tool`. */
export function changeSourceOf(a: Activity, recorded: Recorded<Run | ToolCall> | null): ChangeSource {
  if (a.kind === 'tool') return 'tool';
  return (recorded?.record as Run | undefined)?.source ?? 'run';
}

/** `run.started` or `tool.started` with the record. */
export function emitStarted(emitter: RecorderEmitter, a: Activity, record: Run | ToolCall): void {
  const session_id = a.sessionId;
  if (a.kind === 'tool') emitter.toSession(session_id, 'tool.started', { session_id, tool_call: record as ToolCall });
  else emitter.toSession(session_id, 'run.started', { session_id, run: record as Run });
}

/** The terminal event: `tool.completed`, or `run.completed` / `run.failed`. */
export function emitClosed(emitter: RecorderEmitter, a: Activity, record: Run | ToolCall): void {
  const session_id = a.sessionId;
  if (a.kind === 'tool') {
    emitter.toSession(session_id, 'tool.completed', { session_id, tool_call: record as ToolCall });
    return;
  }
  const event = record.status === 'failed' ? 'run.failed' : 'run.completed';
  emitter.toSession(session_id, event, { session_id, run: record as Run });
}
