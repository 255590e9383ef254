import type { StartResponse, UntrackedReason } from '../../shared/index.ts';
import type { StartResult } from '../checkpoint/types.ts';
import type { StartOutcome } from '../store/index.ts';
import { resolveWorkspace } from '../workspace/index.ts';
import { emitStarted, newRecord, toolCallIdOf, type Activity, type StartFields } from './activity.ts';
import { inFlightKey, once, type RecorderContext } from './context.ts';
import { trackedStart, untrackedStart } from './payloads.ts';
import { emitSession } from './sessions.ts';

/** Resolves the workspace and takes the checkpoint; every problem becomes an untracked answer. */
async function checkpoint(
  ctx: RecorderContext,
  a: Activity,
  workspace: string | null,
  sameFolder: StartFields['sameFolder'],
): Promise<StartOutcome> {
  const { sessionId, runId, changeId } = a;
  const resolved = await resolveWorkspace(workspace, {
    workspaceRoots: ctx.config.workspaceRoots,
    homeDir: ctx.config.homeDir,
  });
  if (!resolved.ok) {
    return { tracking: false, reason: resolved.reason, response: untrackedStart(changeId, resolved.reason) };
  }
  let result: StartResult;
  try {
    result = await ctx.engine.start({ sessionId, changeId, runId, workspace: resolved });
  } catch (err) {
    // Tracking never fails the run: an engine failure is reported as an unreadable workspace.
    ctx.log(`checkpoint for ${changeId} failed: ${(err as Error).message}`);
    return {
      tracking: false,
      reason: 'workspace_unreadable',
      response: untrackedStart(changeId, 'workspace_unreadable'),
    };
  }
  const toolCallId = toolCallIdOf(a);
  ctx.observers.notify((o) =>
    o.checkpointTaken?.({ sessionId, runId, changeId, toolCallId, workspace: resolved, result }),
  );
  // Checked last, so nothing between the resolution and the answer escapes it.
  if (sameFolder && !sameFolder(resolved.root)) {
    ctx.log(`checkpoint for ${changeId} dropped: ${workspace} no longer leads to the folder its caller holds open`);
    ctx.engine.drop(sessionId, changeId);
    return {
      tracking: false,
      reason: 'workspace_missing',
      response: untrackedStart(changeId, 'workspace_missing'),
    };
  }
  return { tracking: true, reason: null, response: trackedStart(changeId, result) };
}

/** A start that arrives after its run or tool call finished takes no checkpoint: nothing would complete it. */
function startOutcome(
  ctx: RecorderContext,
  a: Activity,
  status: string | undefined,
  workspace: string | null,
  sameFolder: StartFields['sameFolder'],
): Promise<StartOutcome> | { tracking: false; reason: UntrackedReason; response: StartResponse } {
  if (status !== undefined && status !== 'running') {
    return { tracking: false, reason: 'no_checkpoint', response: untrackedStart(a.changeId, 'no_checkpoint') };
  }
  return checkpoint(ctx, a, workspace, sameFolder);
}

/**
 * `run.started` and `tool.started`: records the activity (once), takes its checkpoint before
 * answering, stores the answer, and emits the start event. A repeat answers as the first did.
 * The workspace is the event's, else (a tool call) its run's, else the session's; a run naming a
 * workspace gives it to a session that has none.
 */
export function start(ctx: RecorderContext, a: Activity, fields: StartFields): Promise<StartResponse> {
  const { store, engine } = ctx;
  const { kind, sessionId, id } = a;
  engine.touch(sessionId, a.runId);
  return once(ctx.starting, inFlightKey(sessionId, a.changeId), async () => {
    const t = ctx.now();
    // One transaction from the first read: nothing of another flow lands between reading the record and writing it.
    const begun = await store.transaction(async (tx) => {
      const existing = await tx.runs.get(kind, sessionId, id);
      if (existing?.startResponse) return { existing, workspace: null, replay: existing.startResponse };
      await tx.sessions.touch(sessionId, t);
      if (kind === 'run' && fields.workspace !== undefined)
        await tx.sessions.adoptWorkspace(sessionId, fields.workspace);
      let workspace =
        fields.workspace ??
        (kind === 'tool' ? (await tx.runs.get('run', sessionId, a.runId))?.workspace : undefined) ??
        (await tx.sessions.get(sessionId))?.workspace ??
        null;
      if (!existing) await tx.runs.insert(kind, newRecord(a, t, workspace, fields));
      else workspace = existing.workspace;
      return { existing, workspace, replay: null };
    });
    if (begun.replay) return begun.replay;
    const { existing, workspace } = begun;
    const outcome = await startOutcome(ctx, a, existing?.record.status, workspace, fields.sameFolder);
    await store.runs.recordStart(kind, sessionId, id, outcome);
    const recorded = await store.runs.get(kind, sessionId, id);
    if (!recorded) {
      // The session was deleted while the checkpoint was taken: nothing to track it for.
      engine.drop(sessionId, a.changeId);
      return outcome.response;
    }
    emitStarted(ctx.emitter, a, recorded.record);
    await emitSession(ctx, sessionId);
    return outcome.response;
  });
}
