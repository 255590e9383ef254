import { randomUUID } from 'node:crypto';
import {
  runChangeId,
  toolChangeId,
  type BridgeEvent,
  type ChangeSource,
  type ChangeSummary,
  type CompleteResponse,
  type MessageEvent,
  type MessageResponse,
  type RunFinishedEvent,
  type RunStartedEvent,
  type SessionUpsertEvent,
  type SessionUpsertResponse,
  type StartResponse,
  type ToolCompletedEvent,
  type ToolStartedEvent,
  type UntrackedReason,
} from '../../shared/index.ts';
import type { Config } from '../config.ts';
import type { CheckpointEngine, DeltaResult, StartResult } from '../checkpoint/types.ts';
import { storageFailure, type Store, type StartOutcome } from '../store/index.ts';
import { resolveWorkspace, type ResolvedWorkspace } from '../workspace/index.ts';
import type { BridgeEmitter } from './emitter.ts';
import {
  diffCompletedPayload,
  toNewChange,
  toNewFile,
  trackedCompletion,
  trackedStart,
  untrackedCompletion,
  untrackedStart,
} from './payloads.ts';

/** Told when a checkpoint exists and when its run or tool call closes (the live feed listens). */
export interface RunObserver {
  checkpointTaken?(ctx: {
    sessionId: string;
    runId: string;
    changeId: string;
    toolCallId: string | null;
    workspace: ResolvedWorkspace;
    result: StartResult;
  }): void;
  closing?(ctx: { sessionId: string; runId: string; changeId: string; toolCallId: string | null }): void;
}

export interface BridgeDeps {
  config: Pick<Config, 'workspaceRoots' | 'homeDir' | 'limits'>;
  store: Store;
  engine: CheckpointEngine;
  emitter: BridgeEmitter;
  now?: () => number;
  observers?: RunObserver[];
  /** Problems that never fail a run (an engine error) are reported here. Default: stderr. */
  log?: (message: string) => void;
}

const keyOf = (sessionId: string, changeId: string) => `${sessionId}\u0000${changeId}`;

/**
 * The bridge: one function per event type. Every run and tool call is recorded whether tracked or
 * not; a checkpoint is taken before a start is answered; a completion stores its change in one
 * transaction and emits `workspace.diff.completed` before the terminal event. Repeats answer as the
 * first did, also while the first is still in flight (the in-flight promise is shared) and after a
 * restart (the first answer is stored with the run).
 */
export function createBridge(deps: BridgeDeps) {
  const { store, engine, emitter, config } = deps;
  const now = deps.now ?? Date.now;
  const observers = [...(deps.observers ?? [])];
  const log = deps.log ?? ((m: string) => void process.stderr.write(`rundiff: ${m}\n`));
  const starting = new Map<string, Promise<StartResponse>>();
  const completing = new Map<string, Promise<CompleteResponse>>();

  function emitSession(sessionId: string): void {
    const session = store.sessions.get(sessionId);
    if (session) emitter.toSessionsList('session.updated', { session });
  }

  function notify(fn: (o: RunObserver) => void): void {
    for (const o of observers) {
      try {
        fn(o);
      } catch (err) {
        log(`observer failed: ${(err as Error).message}`);
      }
    }
  }

  /** Resolves the workspace and takes the checkpoint; every problem becomes an untracked answer. */
  async function checkpoint(
    sessionId: string,
    runId: string,
    changeId: string,
    toolCallId: string | null,
    workspace: string | null,
  ): Promise<StartOutcome> {
    const resolved = await resolveWorkspace(workspace, {
      workspaceRoots: config.workspaceRoots,
      homeDir: config.homeDir,
    });
    if (!resolved.ok) {
      return { tracking: false, reason: resolved.reason, response: untrackedStart(changeId, resolved.reason) };
    }
    let result: StartResult;
    try {
      result = await engine.start({ sessionId, changeId, runId, workspace: resolved });
    } catch (err) {
      // Tracking never fails the run: an engine failure is reported as an unreadable workspace.
      log(`checkpoint for ${changeId} failed: ${(err as Error).message}`);
      return {
        tracking: false,
        reason: 'workspace_unreadable',
        response: untrackedStart(changeId, 'workspace_unreadable'),
      };
    }
    notify((o) => o.checkpointTaken?.({ sessionId, runId, changeId, toolCallId, workspace: resolved, result }));
    return { tracking: true, reason: null, response: trackedStart(changeId, result) };
  }

  /**
   * Computes the delta, keeping the checkpoint until the result is stored (the caller drops it);
   * null when there is no checkpoint (or the engine failed, logged).
   */
  async function delta(sessionId: string, changeId: string): Promise<DeltaResult | null> {
    try {
      return await engine.completeKept(sessionId, changeId);
    } catch (err) {
      log(`delta for ${changeId} failed: ${(err as Error).message}`);
      engine.drop(sessionId, changeId);
      return null;
    }
  }

  /** Shares the in-flight promise of a key, so a repeat during the first call answers the same. */
  function once<T>(map: Map<string, Promise<T>>, key: string, work: () => Promise<T>): Promise<T> {
    const inflight = map.get(key);
    if (inflight) return inflight;
    const p = work().finally(() => map.delete(key));
    map.set(key, p);
    return p;
  }

  async function sessionUpsert(e: Omit<SessionUpsertEvent, 'type'>): Promise<SessionUpsertResponse> {
    const fields: { title?: string; workspace?: string } = {};
    if (e.title !== undefined) fields.title = e.title;
    if (e.workspace !== undefined) fields.workspace = e.workspace;
    store.sessions.upsert(e.session_id, fields, now());
    const session = store.sessions.get(e.session_id)!;
    emitter.toSessionsList('session.updated', { session });
    return { session };
  }

  async function message(e: Omit<MessageEvent, 'type'>): Promise<MessageResponse> {
    const t = now();
    const sessionId = e.session_id;
    if (e.run_id !== undefined) engine.touch(sessionId, e.run_id);
    const id = e.message_id ?? randomUUID();
    const msg = store.transaction(() => {
      store.sessions.touch(sessionId, t);
      const existing = store.messages.get(sessionId, id);
      const m = {
        id,
        session_id: sessionId,
        role: e.role,
        content: e.content,
        run_id: e.run_id ?? existing?.run_id ?? null,
        tool_call_id: e.tool_call_id ?? existing?.tool_call_id ?? null,
        created_at: e.created_at ?? existing?.created_at ?? t,
      };
      if (existing) store.messages.update(m);
      else store.messages.insert(m);
      return { message: m, created: !existing };
    });
    emitter.toSession(sessionId, msg.created ? 'message.created' : 'message.updated', {
      session_id: sessionId,
      message: msg.message,
    });
    emitSession(sessionId);
    return { message: msg.message };
  }

  /** A start that arrives after its run or tool call finished takes no checkpoint: nothing would complete it. */
  function startOutcome(
    status: string | undefined,
    ...args: Parameters<typeof checkpoint>
  ): ReturnType<typeof checkpoint> | { tracking: false; reason: UntrackedReason; response: StartResponse } {
    if (status !== undefined && status !== 'running') {
      return { tracking: false, reason: 'no_checkpoint', response: untrackedStart(args[2], 'no_checkpoint') };
    }
    return checkpoint(...args);
  }

  function runStarted(e: Omit<RunStartedEvent, 'type'>): Promise<StartResponse> {
    const { session_id: sessionId, run_id: runId } = e;
    const changeId = runChangeId(runId);
    engine.touch(sessionId, runId);
    return once(starting, keyOf(sessionId, changeId), async () => {
      const existing = store.runs.getRun(sessionId, runId);
      if (existing?.startResponse) return existing.startResponse;
      const t = now();
      let workspace: string | null = null;
      store.transaction(() => {
        store.sessions.touch(sessionId, t);
        if (e.workspace !== undefined) store.sessions.adoptWorkspace(sessionId, e.workspace);
        workspace = e.workspace ?? store.sessions.get(sessionId)?.workspace ?? null;
        if (!existing) {
          store.runs.insertRun({
            run_id: runId,
            session_id: sessionId,
            status: 'running',
            source: e.source ?? 'run',
            workspace,
            started_at: t,
            finished_at: null,
            error: null,
            change_id: changeId,
            tracking: false,
            reason: null,
          });
        } else workspace = existing.record.workspace;
      });
      const outcome = await startOutcome(existing?.record.status, sessionId, runId, changeId, null, workspace);
      store.runs.recordRunStart(sessionId, runId, outcome);
      const run = store.runs.getRun(sessionId, runId);
      if (!run) {
        // The session was deleted while the checkpoint was taken: nothing to track it for.
        engine.drop(sessionId, changeId);
        return outcome.response;
      }
      emitter.toSession(sessionId, 'run.started', { session_id: sessionId, run: run.record });
      emitSession(sessionId);
      return outcome.response;
    });
  }

  function toolStarted(e: Omit<ToolStartedEvent, 'type'>): Promise<StartResponse> {
    const { session_id: sessionId, run_id: runId, tool_call_id: toolCallId } = e;
    const changeId = toolChangeId(toolCallId);
    engine.touch(sessionId, runId);
    return once(starting, keyOf(sessionId, changeId), async () => {
      const existing = store.runs.getToolCall(sessionId, toolCallId);
      if (existing?.startResponse) return existing.startResponse;
      const t = now();
      let workspace: string | null = null;
      store.transaction(() => {
        store.sessions.touch(sessionId, t);
        workspace =
          e.workspace ??
          store.runs.getRun(sessionId, runId)?.record.workspace ??
          store.sessions.get(sessionId)?.workspace ??
          null;
        if (!existing) {
          store.runs.insertToolCall({
            tool_call_id: toolCallId,
            run_id: runId,
            session_id: sessionId,
            name: e.name ?? null,
            status: 'running',
            workspace,
            started_at: t,
            finished_at: null,
            error: null,
            change_id: changeId,
            tracking: false,
            reason: null,
          });
        } else workspace = existing.workspace;
      });
      const outcome = await startOutcome(existing?.record.status, sessionId, runId, changeId, toolCallId, workspace);
      store.runs.recordToolStart(sessionId, toolCallId, outcome);
      const call = store.runs.getToolCall(sessionId, toolCallId);
      if (!call) {
        engine.drop(sessionId, changeId);
        return outcome.response;
      }
      emitter.toSession(sessionId, 'tool.started', { session_id: sessionId, tool_call: call.record });
      emitSession(sessionId);
      return outcome.response;
    });
  }

  interface Closing {
    sessionId: string;
    runId: string;
    changeId: string;
    toolCallId: string | null;
    status: 'completed' | 'failed';
    error: string | null;
  }

  /**
   * The shared completion of runs and tool calls: delta, one storing transaction (change rows,
   * retention, the finished record and its answer), then `workspace.diff.completed`, then the
   * terminal event.
   */
  async function close(c: Closing): Promise<CompleteResponse> {
    const { sessionId, runId, changeId, toolCallId } = c;
    const isTool = toolCallId !== null;
    const key = keyOf(sessionId, changeId);
    engine.touch(sessionId, runId);
    const pendingStart = starting.get(key);
    if (pendingStart) await pendingStart.catch(() => undefined);
    return once(completing, key, async () => {
      const read = () => (isTool ? store.runs.getToolCall(sessionId, toolCallId) : store.runs.getRun(sessionId, runId));
      const first = read();
      if (first?.completeResponse) return first.completeResponse;
      notify((o) => o.closing?.({ sessionId, runId, changeId, toolCallId }));

      let d: DeltaResult | null = null;
      let reason: UntrackedReason | null = null;
      const startAnswer = first?.startResponse ?? null;
      if (startAnswer && !startAnswer.tracking) {
        reason = startAnswer.reason;
        engine.drop(sessionId, changeId);
      } else {
        d = await delta(sessionId, changeId);
        if (!d) reason = 'no_checkpoint';
      }

      const t = now();
      const source: ChangeSource = isTool
        ? 'tool'
        : ((first?.record as { source?: ChangeSource } | undefined)?.source ?? 'run');
      const outcome = storeCompletion(c, () => {
        // The session (and record) may be new here: a completion without a start, or a session
        // deleted while the delta was computed. Sessions are created by the first event naming them.
        store.sessions.touch(sessionId, t);
        ensureRecord(c, t);
        let stored: ChangeSummary | null = null;
        if (d && d.changed_count > 0) {
          stored = store.changes.insert(
            toNewChange({ sessionId, runId, changeId, toolCallId, source }, d, t),
            d.files.map(toNewFile),
            config.limits.maxChangesPerSession,
          );
        }
        const response = d
          ? trackedCompletion(changeId, d, stored)
          : untrackedCompletion(changeId, reason ?? 'no_checkpoint');
        const finish = {
          status: c.status,
          finished_at: t,
          error: c.error,
          tracking: d !== null,
          reason: d ? null : (reason ?? 'no_checkpoint'),
          response,
        };
        if (isTool) store.runs.finishToolCall(sessionId, toolCallId, finish);
        else store.runs.finishRun(sessionId, runId, finish);
        return { response, stored };
      });
      // Stored: only now may the checkpoint (and its computed delta) go.
      engine.drop(sessionId, changeId);

      if (outcome.stored)
        emitter.toSession(sessionId, 'workspace.diff.completed', diffCompletedPayload(outcome.stored));
      if (isTool) {
        const call = store.runs.getToolCall(sessionId, toolCallId)!;
        emitter.toSession(sessionId, 'tool.completed', { session_id: sessionId, tool_call: call.record });
      } else {
        const run = store.runs.getRun(sessionId, runId)!;
        emitter.toSession(sessionId, c.status === 'failed' ? 'run.failed' : 'run.completed', {
          session_id: sessionId,
          run: run.record,
        });
      }
      emitSession(sessionId);
      return outcome.response;
    });
  }

  /**
   * Runs the storing transaction of a completion. When it fails (a full disk, a read-only
   * database) nothing of it is kept, the checkpoint with its computed delta stays for a retry of
   * the same completion, the cause is logged, and the answer names the storage failure.
   */
  function storeCompletion<T>(c: Closing, fn: () => T): T {
    try {
      return store.transaction(fn);
    } catch (err) {
      const what = `${c.toolCallId !== null ? 'tool call' : 'run'} completion ${c.changeId} of session ${c.sessionId}`;
      log(`${what} was not stored: ${(err as Error).message}`);
      throw (
        storageFailure(
          err,
          `the ${what} could not be stored`,
          'the change is kept: send the same completion again once the database can be written',
        ) ?? err
      );
    }
  }

  /** A completion without a recorded start still records the run or tool call (as never tracked). */
  function ensureRecord(c: Closing, t: number): void {
    const { sessionId, runId, changeId, toolCallId } = c;
    if (toolCallId !== null) {
      if (store.runs.getToolCall(sessionId, toolCallId)) return;
      store.runs.insertToolCall({
        tool_call_id: toolCallId,
        run_id: runId,
        session_id: sessionId,
        name: null,
        status: 'running',
        workspace: null,
        started_at: t,
        finished_at: null,
        error: null,
        change_id: changeId,
        tracking: false,
        reason: null,
      });
      return;
    }
    if (store.runs.getRun(sessionId, runId)) return;
    store.runs.insertRun({
      run_id: runId,
      session_id: sessionId,
      status: 'running',
      source: 'run',
      workspace: null,
      started_at: t,
      finished_at: null,
      error: null,
      change_id: changeId,
      tracking: false,
      reason: null,
    });
  }

  function toolCompleted(e: Omit<ToolCompletedEvent, 'type'>): Promise<CompleteResponse> {
    return close({
      sessionId: e.session_id,
      runId: e.run_id,
      changeId: toolChangeId(e.tool_call_id),
      toolCallId: e.tool_call_id,
      status: e.error !== undefined ? 'failed' : 'completed',
      error: e.error ?? null,
    });
  }

  function runFinished(e: Omit<RunFinishedEvent, 'type'>, status: 'completed' | 'failed'): Promise<CompleteResponse> {
    return close({
      sessionId: e.session_id,
      runId: e.run_id,
      changeId: runChangeId(e.run_id),
      toolCallId: null,
      status,
      error: e.error ?? null,
    });
  }

  const api = {
    sessionUpsert,
    message,
    runStarted,
    toolStarted,
    toolCompleted,
    runCompleted: (e: Omit<RunFinishedEvent, 'type'>) => runFinished(e, 'completed'),
    runFailed: (e: Omit<RunFinishedEvent, 'type'>) => runFinished(e, 'failed'),
  };

  /** Dispatches a validated event to its function; the answer is the HTTP response body. */
  function handle(e: BridgeEvent): Promise<unknown> {
    switch (e.type) {
      case 'session.upsert':
        return api.sessionUpsert(e);
      case 'message':
        return api.message(e);
      case 'run.started':
        return api.runStarted(e);
      case 'tool.started':
        return api.toolStarted(e);
      case 'tool.completed':
        return api.toolCompleted(e);
      case 'run.completed':
        return api.runCompleted(e);
      case 'run.failed':
        return api.runFailed(e);
    }
  }

  /**
   * Deletes a session and everything of it in one transaction (B22), dropping the checkpoints of
   * its open runs first; emits `session.deleted`. False when there was no such session.
   */
  function deleteSession(sessionId: string): boolean {
    for (const changeId of store.runs.openChangeIds(sessionId)) engine.drop(sessionId, changeId);
    const deleted = store.transaction(() => store.sessions.delete(sessionId));
    if (deleted) emitter.toSessionsList('session.deleted', { session_id: sessionId });
    return deleted;
  }

  /** The age sweep (B22): changes stored more than `retentionDays` ago are removed. */
  function sweepOld(): number {
    const cutoff = now() - config.limits.retentionDays * 24 * 60 * 60 * 1000;
    return store.changes.deleteOlderThan(cutoff);
  }

  /** Adds observers after construction (they may need the running server, built after the bridge). */
  function addObservers(more: RunObserver[]): void {
    observers.push(...more);
  }

  return { ...api, handle, deleteSession, sweepOld, addObservers };
}

export type Bridge = ReturnType<typeof createBridge>;
