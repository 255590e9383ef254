import type {
  CompleteResponse,
  Run,
  RunSource,
  RunStatus,
  StartResponse,
  ToolCall,
  UntrackedReason,
} from '../../shared/index.ts';
import type { Db } from './database.ts';
import type { WriteClock } from './write-clock.ts';

/** A run or tool call with the answers given to its start and completion (replayed on repeats). */
export interface Recorded<T> {
  record: T;
  startResponse: StartResponse | null;
  completeResponse: CompleteResponse | null;
}

export interface Finish {
  status: Exclude<RunStatus, 'running'>;
  finished_at: number;
  error: string | null;
  tracking: boolean;
  reason: UntrackedReason | null;
  response: CompleteResponse;
}

export interface StartOutcome {
  tracking: boolean;
  reason: UntrackedReason | null;
  response: StartResponse;
}

interface RunRow {
  run_id: string;
  session_id: string;
  status: RunStatus;
  source: RunSource;
  workspace: string | null;
  started_at: number;
  finished_at: number | null;
  error: string | null;
  change_id: string;
  tracking: number;
  reason: UntrackedReason | null;
  start_response: string | null;
  complete_response: string | null;
}

interface ToolRow extends Omit<RunRow, 'source'> {
  tool_call_id: string;
  name: string | null;
}

const RUN_COLUMNS =
  'run_id, session_id, status, source, workspace, started_at, finished_at, error, change_id, tracking, reason';
const TOOL_COLUMNS =
  'tool_call_id, run_id, session_id, name, status, workspace, started_at, finished_at, error, change_id, tracking, reason';

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

function toRun(r: Omit<RunRow, 'start_response' | 'complete_response'>): Run {
  return {
    run_id: r.run_id,
    session_id: r.session_id,
    status: r.status,
    source: r.source,
    workspace: r.workspace,
    started_at: r.started_at,
    finished_at: r.finished_at,
    error: r.error,
    change_id: r.change_id,
    tracking: r.tracking === 1,
    reason: r.reason,
  };
}

function toToolCall(r: Omit<ToolRow, 'start_response' | 'complete_response'>): ToolCall {
  return {
    tool_call_id: r.tool_call_id,
    run_id: r.run_id,
    session_id: r.session_id,
    name: r.name,
    status: r.status,
    started_at: r.started_at,
    finished_at: r.finished_at,
    error: r.error,
    change_id: r.change_id,
    tracking: r.tracking === 1,
    reason: r.reason,
  };
}

/** Workspace of a tool call is kept for defaults and diagnostics; the DTO does not carry it. */
export interface NewToolCall extends ToolCall {
  workspace: string | null;
}

export function createRunStore(db: Db, clock: WriteClock) {
  const getRun = db.prepare<[string, string], RunRow>(
    `SELECT ${RUN_COLUMNS}, start_response, complete_response FROM runs WHERE session_id = ? AND run_id = ?`,
  );
  const insertRun = db.prepare(
    `INSERT INTO runs (${RUN_COLUMNS}) VALUES (@run_id, @session_id, @status, @source, @workspace, @started_at,
       @finished_at, @error, @change_id, @tracking, @reason)`,
  );
  const startRun = db.prepare(
    `UPDATE runs SET tracking = @tracking, reason = @reason, start_response = @response
     WHERE session_id = @session_id AND run_id = @run_id`,
  );
  const finishRun = db.prepare(
    `UPDATE runs SET status = @status, finished_at = @finished_at, error = @error, tracking = @tracking,
       reason = @reason, complete_response = @response WHERE session_id = @session_id AND run_id = @run_id`,
  );
  const listRuns = db.prepare<[string], RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs WHERE session_id = ? ORDER BY started_at, seq`,
  );

  const getTool = db.prepare<[string, string], ToolRow>(
    `SELECT ${TOOL_COLUMNS}, start_response, complete_response FROM tool_calls WHERE session_id = ? AND tool_call_id = ?`,
  );
  const insertTool = db.prepare(
    `INSERT INTO tool_calls (${TOOL_COLUMNS}) VALUES (@tool_call_id, @run_id, @session_id, @name, @status, @workspace,
       @started_at, @finished_at, @error, @change_id, @tracking, @reason)`,
  );
  const startTool = db.prepare(
    `UPDATE tool_calls SET tracking = @tracking, reason = @reason, start_response = @response
     WHERE session_id = @session_id AND tool_call_id = @tool_call_id`,
  );
  const finishTool = db.prepare(
    `UPDATE tool_calls SET status = @status, finished_at = @finished_at, error = @error, tracking = @tracking,
       reason = @reason, complete_response = @response WHERE session_id = @session_id AND tool_call_id = @tool_call_id`,
  );
  const listTools = db.prepare<[string], ToolRow>(
    `SELECT ${TOOL_COLUMNS} FROM tool_calls WHERE session_id = ? ORDER BY started_at, seq`,
  );
  const openChanges = db.prepare<[string, string], { change_id: string }>(
    `SELECT change_id FROM runs WHERE session_id = ? AND status = 'running'
     UNION ALL SELECT change_id FROM tool_calls WHERE session_id = ? AND status = 'running'`,
  );

  const bool = (b: boolean) => (b ? 1 : 0);
  // The start and finish columns are the same for runs and tool calls.
  const startColumns = (o: StartOutcome) => ({
    tracking: bool(o.tracking),
    reason: o.reason,
    response: JSON.stringify(o.response),
  });
  const finishColumns = (f: Finish) => ({
    status: f.status,
    finished_at: f.finished_at,
    error: f.error,
    tracking: bool(f.tracking),
    reason: f.reason,
    response: JSON.stringify(f.response),
  });

  return {
    getRun(sessionId: string, runId: string): Recorded<Run> | null {
      const row = getRun.get(sessionId, runId);
      if (!row) return null;
      return {
        record: toRun(row),
        startResponse: parse(row.start_response),
        completeResponse: parse(row.complete_response),
      };
    },
    insertRun(run: Run): void {
      clock.bump(run.session_id);
      insertRun.run({ ...run, tracking: bool(run.tracking) });
    },
    recordRunStart(sessionId: string, runId: string, o: StartOutcome): void {
      clock.bump(sessionId);
      startRun.run({
        session_id: sessionId,
        run_id: runId,
        ...startColumns(o),
      });
    },
    finishRun(sessionId: string, runId: string, f: Finish): void {
      clock.bump(sessionId);
      finishRun.run({
        session_id: sessionId,
        run_id: runId,
        ...finishColumns(f),
      });
    },
    listRuns(sessionId: string): Run[] {
      return listRuns.all(sessionId).map(toRun);
    },

    getToolCall(sessionId: string, toolCallId: string): (Recorded<ToolCall> & { workspace: string | null }) | null {
      const row = getTool.get(sessionId, toolCallId);
      if (!row) return null;
      return {
        record: toToolCall(row),
        workspace: row.workspace,
        startResponse: parse(row.start_response),
        completeResponse: parse(row.complete_response),
      };
    },
    insertToolCall(call: NewToolCall): void {
      clock.bump(call.session_id);
      insertTool.run({ ...call, tracking: bool(call.tracking) });
    },
    recordToolStart(sessionId: string, toolCallId: string, o: StartOutcome): void {
      clock.bump(sessionId);
      startTool.run({
        session_id: sessionId,
        tool_call_id: toolCallId,
        ...startColumns(o),
      });
    },
    finishToolCall(sessionId: string, toolCallId: string, f: Finish): void {
      clock.bump(sessionId);
      finishTool.run({
        session_id: sessionId,
        tool_call_id: toolCallId,
        ...finishColumns(f),
      });
    },
    listToolCalls(sessionId: string): ToolCall[] {
      return listTools.all(sessionId).map(toToolCall);
    },
    /** change_ids of the session's runs and tool calls still open (their checkpoints are live). */
    openChangeIds(sessionId: string): string[] {
      return openChanges.all(sessionId, sessionId).map((r) => r.change_id);
    },
  };
}

export type RunStore = ReturnType<typeof createRunStore>;
