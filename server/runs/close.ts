import {
  TOOL_ENDED_WITH_RUN,
  type ChangeSummary,
  type CompleteResponse,
  type RunUsage,
  type UntrackedReason,
} from '../../shared/index.ts';
import type { DeltaResult } from '../checkpoint/types.ts';
import {
  storageFailure,
  type PendingContent,
  type PreparedContent,
  type RawContent,
  type StoreTx,
} from '../store/index.ts';
import {
  changeSourceOf,
  emitClosed,
  nameOf,
  newRecord,
  toolActivity,
  toolCallIdOf,
  type Activity,
} from './activity.ts';
import { planContents, recordContents } from './contents.ts';
import { inFlightKey, once, type RecorderContext } from './context.ts';
import { diffCompletedPayload, toNewChange, toNewFile, trackedCompletion, untrackedCompletion } from './payloads.ts';
import { emitSession } from './sessions.ts';
import { emitViewed } from './viewed.ts';

export interface Closing {
  status: 'completed' | 'failed';
  error: string | null;
  /** A run's tokens as its agent reported them, stored with its end (a tool call has none). */
  usage?: RunUsage;
  /**
   * In-process closes only (a revert run): asked with the workspace the delta was computed of, by
   * name, once it is computed; false means it may be of another folder than the one the caller
   * wrote (a folder above was swapped), so no change is stored (`workspace_missing`).
   */
  sameFolder?: (root: string) => boolean;
}

/**
 * Computes the delta, keeping the checkpoint until the result is stored (the caller drops it);
 * null when there is no checkpoint (or the engine failed, logged).
 */
async function delta(ctx: RecorderContext, a: Activity): Promise<DeltaResult | null> {
  try {
    return await ctx.engine.completeKept(a.sessionId, a.changeId);
  } catch (err) {
    ctx.log(`delta for ${a.changeId} failed: ${(err as Error).message}`);
    ctx.engine.drop(a.sessionId, a.changeId);
    return null;
  }
}

/**
 * Runs the storing transaction of a completion. When it fails (a full disk, a read-only
 * database) nothing of it is kept, the checkpoint with its computed delta stays for a retry of
 * the same completion, the cause is logged, and the answer names the storage failure.
 */
async function storeCompletion<T>(ctx: RecorderContext, a: Activity, fn: (tx: StoreTx) => Promise<T>): Promise<T> {
  try {
    return await ctx.store.transaction(fn);
  } catch (err) {
    const what = `${nameOf(a)} completion ${a.changeId} of session ${a.sessionId}`;
    ctx.log(`${what} was not stored: ${(err as Error).message}`);
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
async function ensureRecord(tx: StoreTx, a: Activity, t: number): Promise<void> {
  if (await tx.runs.get(a.kind, a.sessionId, a.id)) return;
  await tx.runs.insert(a.kind, newRecord(a, t, null));
}

/**
 * A run's end closes its tool calls still open, before the run itself (their terminal events come
 * first): each is `failed` with `TOOL_ENDED_WITH_RUN` and stores what changed from its start to
 * now, as a completion of its own would have. Nothing else would ever close them, and an open tool
 * call keeps its checkpoint (and a revert of the workspace refused as busy) until the TTL.
 */
async function closeOpenTools(ctx: RecorderContext, run: Activity): Promise<void> {
  for (const toolCallId of await ctx.store.runs.openToolCalls(run.sessionId, run.runId))
    await close(ctx, toolActivity(run.sessionId, run.runId, toolCallId), {
      status: 'failed',
      error: TOOL_ENDED_WITH_RUN,
    });
}

/**
 * `tool.completed`, `run.completed` and `run.failed` (a run's end first closes its open tool calls): delta, one storing transaction (change rows,
 * retention, the finished record and its answer), then `workspace.diff.completed`, then the
 * terminal event. Waits for a start still in flight; a repeat answers as the first did.
 */
export async function close(ctx: RecorderContext, a: Activity, c: Closing): Promise<CompleteResponse> {
  const { store, engine } = ctx;
  const { kind, sessionId, runId, id, changeId } = a;
  const toolCallId = toolCallIdOf(a);
  const key = inFlightKey(sessionId, changeId);
  engine.touch(sessionId, runId);
  const pendingStart = ctx.starting.get(key);
  if (pendingStart) await pendingStart.catch(() => undefined);
  return once(ctx.completing, key, async () => {
    const first = await store.runs.get(kind, sessionId, id);
    if (first?.completeResponse) return first.completeResponse;
    if (kind === 'run') await closeOpenTools(ctx, a);
    ctx.observers.notify((o) => o.closing?.({ sessionId, runId, changeId, toolCallId }));

    let d: DeltaResult | null = null;
    let reason: UntrackedReason | null = null;
    const startAnswer = first?.startResponse ?? null;
    if (startAnswer && !startAnswer.tracking) {
      reason = startAnswer.reason;
      engine.drop(sessionId, changeId);
    } else {
      d = await delta(ctx, a);
      if (!d) reason = 'no_checkpoint';
      else if (c.sameFolder && !c.sameFolder(d.workspace ?? '')) {
        ctx.log(`change ${changeId} not stored: ${d.workspace} no longer leads to the folder its caller holds open`);
        d = null;
        reason = 'workspace_missing';
      }
    }

    const t = ctx.now();
    const source = changeSourceOf(a, first);
    // Recorded `pending` with the rows; hashed, compressed and written after the answer.
    const contents = d && d.changed_count > 0 ? planContents(d.files, ctx.config.limits.maxContentFileBytes) : [];
    const outcome = await storeCompletion(ctx, a, async (tx) => {
      // The session (and record) may be new here: a completion without a start, or a session
      // deleted while the delta was computed. Sessions are created by the first event naming them.
      await tx.sessions.touch(sessionId, t);
      await ensureRecord(tx, a, t);
      let stored: ChangeSummary | null = null;
      let pending: PendingContent<PreparedContent | RawContent>[] = [];
      let viewedReset = 0;
      if (d && d.changed_count > 0) {
        stored = await tx.changes.insert(
          toNewChange({ sessionId, runId, changeId, toolCallId, source }, d, t),
          d.files.map(toNewFile),
          ctx.config.limits.maxChangesPerSession,
        );
        pending = await recordContents(tx, { sessionId, changeId }, contents, ctx.log);
        // A file changed again is no longer viewed: its marks go with the same transaction.
        viewedReset = await tx.viewed.resetByChange(sessionId, changeId);
      }
      const response = d
        ? trackedCompletion(changeId, d, stored)
        : untrackedCompletion(changeId, reason ?? 'no_checkpoint');
      await tx.runs.finish(kind, sessionId, id, {
        status: c.status,
        finished_at: t,
        error: c.error,
        tracking: d !== null,
        reason: d ? null : (reason ?? 'no_checkpoint'),
        response,
      });
      if (kind === 'run' && c.usage !== undefined) await tx.runs.recordUsage(sessionId, id, c.usage);
      return { response, stored, pending, viewedReset };
    });
    // Stored: only now may the checkpoint (and its computed delta) go.
    engine.drop(sessionId, changeId);
    // The contents follow the answer; a reader of this change's contents waits for them.
    ctx.fills.start(store, ctx.config.limits, { sessionId, changeId, now: t }, outcome.pending);

    if (outcome.stored)
      ctx.emitter.toSession(sessionId, 'workspace.diff.completed', diffCompletedPayload(outcome.stored));
    if (outcome.viewedReset > 0) await emitViewed(ctx, sessionId, 'reset');
    emitClosed(ctx.emitter, a, (await store.runs.get(kind, sessionId, id))!.record);
    await emitSession(ctx, sessionId);
    return outcome.response;
  });
}
