import { AppError } from '../../errors.ts';
import { pseudoMountsBelow } from '../../workspace/index.ts';
import type { Capture, CheckpointStrategy, StrategyDeps } from '../strategy.ts';
import { captureByGitStatus, listedCount, OverScanLimitError } from './capture.ts';
import { collectGitStatusChanges } from './collect.ts';
import type { GitStatusListing, ListingContext } from './listing.ts';
import { createWatchedLister } from './watched-listing.ts';
import { createConfigCache, createIndexCache } from './repository.ts';

const PASSED = { passed: true } as const;

/**
 * git status as the stat source of a git workspace: git lstats the index entries and lists the
 * untracked files, and only the paths it cannot vouch for are read. The checkpoint keeps git's
 * listing at the start. It passes the workspace on (to the walk) when it cannot be used here: no
 * repository, a kernel file system mounted below the root, a filter driver that cannot be switched
 * off, an index only git can read, git failing, or more files than a checkpoint may cover; the
 * cause is logged. git over its listing deadline is not walked (a walk would be slower still):
 * the checkpoint says `git_timeout`. Between checkpoints it keeps each repository's parsed index
 * and config overrides.
 */
export function createGitStatusStrategy(deps: StrategyDeps): CheckpointStrategy<GitStatusListing> {
  const indexCache = createIndexCache();
  const configCache = createConfigCache();
  const watched = deps.watches ? createWatchedLister(deps.watches, deps.watch?.told) : null;
  const list = watched ? (ctx: ListingContext) => watched.list(ctx) : undefined;
  return {
    name: 'git-status',
    async capture(req): Promise<Capture<GitStatusListing>> {
      const repo = req.repo;
      if (req.kind !== 'git' || !repo) return PASSED;
      if (pseudoMountsBelow(req.root).length > 0) return PASSED;
      try {
        const { checkpoint } = await captureByGitStatus({
          root: req.root,
          kind: req.kind,
          repo,
          ownFiles: req.ownFiles,
          limits: deps.limits,
          scanner: deps.scanner,
          gitTimeoutMs: deps.listingTimeoutMs,
          indexCache,
          configCache,
          reserveMemory: req.reserveMemory,
          now: deps.now,
          reportFailure: req.reportFailure,
          list,
        });
        return { taken: checkpoint };
      } catch (err) {
        if (err instanceof AppError && err.code === 'git_timeout') {
          // git could not list this workspace in time; a walk would be slower still. The run is told
          // so at once (nothing is claimed about it) instead of waiting for a walk cut by its deadline.
          req.reportFallback('git listing', err, 'not walked: the checkpoint says git_timeout');
          return { failed: 'git_timeout' };
        }
        if (!(err instanceof OverScanLimitError)) req.reportFallback('git listing', err, 'walking instead');
        return PASSED;
      }
    },
    collect: (cp, req) =>
      collectGitStatusChanges(cp, {
        limits: deps.limits,
        scanner: deps.scanner,
        gitTimeoutMs: deps.listingTimeoutMs,
        ownFiles: req.ownFiles,
        indexCache,
        configCache,
        reportFailure: req.reportFailure,
        list,
      }),
    scannedFiles: (cp) => listedCount(cp.state),
    clear() {
      indexCache.clear();
      configCache.clear();
      watched?.clear();
    },
  };
}
