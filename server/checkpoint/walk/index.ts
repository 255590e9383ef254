import type { CheckpointStrategy, StrategyDeps } from '../strategy.ts';
import { captureCheckpoint } from './capture.ts';
import { collectChanges } from './collect.ts';
import { createIgnoreCache } from './ignore-cache.ts';
import type { ScanPhase, ScanPhaseInput } from './scan-phase.ts';
import type { WalkCheckpoint, WalkState } from './kept-bytes.ts';
import { createWatchedWalk } from './watched-walk.ts';

/**
 * The walk: a `readdir` + `lstat` of the workspace in a worker thread at both ends, git asked only
 * read-only questions (index, ignores, blobs, attributes). It takes any workspace: plain folders,
 * and git workspaces the git-status strategy passes on. It keeps nothing on the checkpoint beyond
 * the model but where the kept bytes it shares with another of its checkpoints live (kept-bytes.ts); between checkpoints it keeps each folder's last ignore listing (the next walk's guess)
 * and, with the watchers on, each plain folder's last walk (watched-walk.ts). A file another of its
 * checkpoints of the folder still held recorded with the same lstat is not read again.
 */
export function createWalkStrategy(deps: StrategyDeps): CheckpointStrategy<WalkState | null> {
  const ignoreCache = createIgnoreCache();
  const watched = deps.watches ? createWatchedWalk(deps.watches, deps.watch?.told) : null;
  /** A plain folder's walk comes from its watcher; a git workspace's is whole (git lists it). */
  const scanOf = (kind: string): ((input: ScanPhaseInput) => Promise<ScanPhase>) | undefined =>
    watched && kind !== 'git' ? (input) => watched.scan(input) : undefined;
  const self: CheckpointStrategy<WalkState | null> = {
    name: 'walk',
    async capture(req) {
      // A checkpoint of this strategy carries this strategy's state.
      const held = (req.held().find((t) => t.strategy === self)?.checkpoint ?? null) as WalkCheckpoint | null;
      const scanPhase = scanOf(req.kind);
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
        held,
        ...(scanPhase ? { scanPhase } : {}),
      });
      if (checkpoint.scanMode === 'git') ignoreCache.remember(checkpoint.root, checkpoint.ignore);
      return { taken: checkpoint };
    },
    async collect(cp, req) {
      const scanPhase = scanOf(cp.kind);
      const collected = await collectChanges(cp, {
        limits: deps.limits,
        scanner: deps.scanner,
        gitTimeoutMs: deps.gitTimeoutMs,
        ownFiles: req.ownFiles,
        rootGitDir: null,
        reportFailure: req.reportFailure,
        ...(scanPhase ? { scanPhase } : {}),
      });
      if (cp.scanMode === 'git') ignoreCache.remember(cp.root, collected.ignore);
      return collected;
    },
    scannedFiles: (cp) => cp.files.paths.length,
    clear() {
      ignoreCache.clear();
      watched?.clear();
    },
  };
  return self;
}
