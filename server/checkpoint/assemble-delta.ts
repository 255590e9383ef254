import type { TruncatedReason } from '../../shared/index.ts';
import { computeDelta } from '../delta/index.ts';
import type { GitDiffEngine } from '../git/index.ts';
import { sortReasons } from './common/reasons.ts';
import { span } from './common/trace.ts';
import type { Entry } from './entry.ts';
import { logEngineFailure } from './failure-log.ts';
import type { EngineContext } from './take-checkpoint.ts';
import type { DeltaResult } from './types.ts';

/**
 * The delta from a taken checkpoint to the workspace now: the changed paths with both sides' bytes
 * (from the strategy that took the checkpoint), then the classified rows, renames and patches
 * (delta/). Never an exception and never a silent "no changes": a failure answers `degraded` and
 * its cause is logged.
 */
export async function assembleDelta(entry: Entry, ctx: EngineContext, diffEngine: GitDiffEngine): Promise<DeltaResult> {
  await entry.started;
  const { checkpoint: cp, strategy } = entry.taken!;
  let reasons: TruncatedReason[];
  let result: Awaited<ReturnType<typeof computeDelta>>;
  const step = span();
  const at = { sessionId: entry.sessionId, changeId: entry.changeId, root: cp.root };
  try {
    const collected = await strategy.collect(cp, {
      ownFiles: ctx.ownFiles(cp.root),
      reportFailure: (what, err) => logEngineFailure(ctx.log, `delta ${what}`, at, err),
    });
    reasons = collected.reasons;
    step('changes');
    result = await computeDelta({
      changes: collected.changes,
      limits: ctx.limits,
      batchDiff: diffEngine.batchDiff,
      renameDetector: diffEngine.renameDetector,
      fallbackDiff: diffEngine.fallbackDiff,
    });
  } catch (err) {
    logEngineFailure(ctx.log, 'delta', at, err);
    reasons = ['degraded'];
    result = await computeDelta({ changes: [], limits: ctx.limits });
  }
  step('completion');
  const all = sortReasons([...reasons, ...result.truncated_reasons]);
  return {
    workspace: cp.root,
    workspace_kind: cp.kind,
    started_at: cp.startedAt,
    finished_at: ctx.now(),
    changed_count: result.changed_count,
    added_count: result.added_count,
    modified_count: result.modified_count,
    deleted_count: result.deleted_count,
    renamed_count: result.renamed_count,
    binary_count: result.binary_count,
    truncated: all.length > 0,
    truncated_reasons: all,
    total_patch_bytes: result.total_patch_bytes,
    overlapping: entry.overlapping,
    omitted_count: result.omitted_count,
    files: result.files,
  };
}
