import type { CheckpointStrategy, StrategyDeps } from '../strategy.ts';
import { captureCheckpoint } from './capture.ts';
import { collectChanges } from './collect.ts';
import { createIgnoreCache } from './ignore-cache.ts';

/**
 * The walk: a `readdir` + `lstat` of the workspace in a worker thread at both ends, git asked only
 * read-only questions (index, ignores, blobs, attributes). It takes any workspace: plain folders,
 * and git workspaces the git-status strategy passes on. It keeps nothing on the checkpoint beyond
 * the model; between checkpoints it keeps each folder's last ignore listing (the next walk's guess).
 */
export function createWalkStrategy(deps: StrategyDeps): CheckpointStrategy<null> {
  const ignoreCache = createIgnoreCache();
  return {
    name: 'walk',
    async capture(req) {
      const { checkpoint } = await captureCheckpoint({
        root: req.root,
        kind: req.kind,
        rootGitDir: req.repo?.gitDir ?? null,
        ownFiles: req.ownFiles,
        limits: deps.limits,
        scanner: deps.scanner,
        gitTimeoutMs: deps.gitTimeoutMs,
        guessIgnore: ignoreCache.get(req.root),
        reserveMemory: req.reserveMemory,
        now: deps.now,
        reportFailure: req.reportFailure,
      });
      if (checkpoint.scanMode === 'git') ignoreCache.remember(checkpoint.root, checkpoint.ignore);
      return { taken: checkpoint };
    },
    async collect(cp, req) {
      const collected = await collectChanges(cp, {
        limits: deps.limits,
        scanner: deps.scanner,
        gitTimeoutMs: deps.gitTimeoutMs,
        ownFiles: req.ownFiles,
        rootGitDir: null,
        reportFailure: req.reportFailure,
      });
      if (cp.scanMode === 'git') ignoreCache.remember(cp.root, collected.ignore);
      return collected;
    },
    scannedFiles: (cp) => cp.files.paths.length,
    clear: () => ignoreCache.clear(),
  };
}
