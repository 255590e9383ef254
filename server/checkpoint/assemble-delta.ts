import type { TruncatedReason } from '../../shared/index.ts';
import { computeDelta } from '../delta/index.ts';
import type { GitDiffEngine } from '../git/index.ts';
import { collectChanges } from './changes.ts';
import { collectOracleChanges } from './oracle-changes.ts';
import type { Entry } from './entry.ts';
import { logEngineFailure } from './failure-log.ts';
import { sortReasons } from './model.ts';
import type { EngineContext } from './take-checkpoint.ts';
import { span } from './trace.ts';
import type { DeltaResult } from './types.ts';

/**
 * The delta from a taken checkpoint to the workspace now: the changed paths with both sides'
 * bytes (changes.ts), then the classified rows, renames and patches (delta/). Never an exception
 * and never a silent "no changes": a failure answers `degraded` and its cause is logged.
 */
export async function assembleDelta(entry: Entry, ctx: EngineContext, diffEngine: GitDiffEngine): Promise<DeltaResult> {
  await entry.started;
  const cp = entry.checkpoint!;
  let reasons: TruncatedReason[];
  let result: Awaited<ReturnType<typeof computeDelta>>;
  const step = span();
  const at = { sessionId: entry.sessionId, changeId: entry.changeId, root: cp.root };
  try {
    const changesCtx = {
      limits: ctx.limits,
      scanner: ctx.scanner,
      gitTimeoutMs: ctx.gitTimeoutMs,
      ownFiles: ctx.ownFiles(cp.root),
      rootGitDir: null,
      reportFailure: (what: string, err: unknown) => logEngineFailure(ctx.log, `delta ${what}`, at, err),
    };
    const collected = cp.oracle
      ? await collectOracleChanges(cp, {
          ...changesCtx,
          gitTimeoutMs: ctx.listingTimeoutMs,
          indexCache: ctx.indexCache,
          configCache: ctx.configCache,
        })
      : await collectChanges(cp, changesCtx);
    reasons = collected.reasons;
    if (cp.scanMode === 'git' && !cp.oracle) ctx.ignoreCache.remember(cp.root, collected.ignore);
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
