import type { RunObserver } from '../runs/index.ts';
import type { DiffProgressPayload } from '../../shared/index.ts';
import { feedKey, LiveFeed, type FeedBudget } from './feed.ts';
import { feedIgnoreFor } from './ignore.ts';
import type { OneShotTimers } from './poller.ts';
import { systemWatchLimit, watchBudgetSize } from '../watch/index.ts';

export interface LiveFeedObserverOptions {
  /** Folder watches the feed may hold (lowered to a share of the system's limit). */
  maxWatches: number;
  dbPath: string | null;
  emit(payload: DiffProgressPayload): void;
  /** The run's changed paths so far (the engine's `peek`), null when its checkpoint is gone. */
  changedSoFar?(sessionId: string, changeId: string): Promise<string[] | null>;
  /** True while the engine still holds the run's checkpoint (a TTL eviction closes the feed). */
  hasCheckpoint(sessionId: string, changeId: string): boolean;
  log?(message: string): void;
  intervalMs?: number;
  /** When a watched run is checked periodically instead, and the pace of the checks (defaults in LiveFeedOptions). */
  budget?: FeedBudget;
  /** The system's per-user watch limit; default read from the system. */
  systemWatchLimit?: number | null;
  now?: () => number;
  timers?: OneShotTimers;
}

/**
 * Connects the live feed to the recorder: a run is followed from the moment its checkpoint is taken
 * (runs only; a tool call is inside its run's feed) until it completes, fails or expires. Expiry is
 * found by `sweep`, which the server runs as a background job.
 */
export function createLiveFeedObserver(opts: LiveFeedObserverOptions): {
  observer: RunObserver;
  feed: LiveFeed;
  /** Closes the feeds of runs whose checkpoint is gone (the TTL dropped it). */
  sweep(): void;
  close(): Promise<void>;
} {
  const systemLimit = opts.systemWatchLimit !== undefined ? opts.systemWatchLimit : systemWatchLimit();
  const feed = new LiveFeed({
    ...opts.budget,
    maxWatches: watchBudgetSize(opts.maxWatches, systemLimit),
    emit: opts.emit,
    ...(opts.log ? { log: opts.log } : {}),
    ...(opts.intervalMs !== undefined ? { intervalMs: opts.intervalMs } : {}),
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.timers ? { timers: opts.timers } : {}),
    ...(opts.changedSoFar ? { changedSoFar: (run) => opts.changedSoFar!(run.sessionId, run.changeId) } : {}),
  });
  const open = new Map<string, { sessionId: string; changeId: string }>();
  const sweep = () => {
    for (const [k, run] of open) {
      if (!opts.hasCheckpoint(run.sessionId, run.changeId)) {
        open.delete(k);
        void feed.close(run.sessionId, run.changeId);
      }
    }
  };
  const observer: RunObserver = {
    checkpointTaken({ sessionId, runId, changeId, toolCallId, workspace }) {
      if (toolCallId !== null) return;
      const run = { sessionId, runId, changeId, root: workspace.root };
      open.set(feedKey(sessionId, changeId), { sessionId, changeId });
      feedIgnoreFor(workspace, opts.dbPath, opts.log).then(
        (ignore) => {
          // The run may have ended while the ignore rules were read.
          if (open.has(feedKey(sessionId, changeId))) feed.open(run, ignore);
        },
        (err: unknown) => {
          // Without the rules a watcher would list ignored paths; the engine's check applies them.
          opts.log?.(`live feed for ${workspace.root}: ignore rules not read: ${(err as Error).message}`);
          if (open.has(feedKey(sessionId, changeId))) feed.open(run, null);
        },
      );
    },
    closing({ sessionId, changeId, toolCallId }) {
      if (toolCallId !== null) return;
      open.delete(feedKey(sessionId, changeId));
      void feed.close(sessionId, changeId);
    },
  };
  return {
    observer,
    feed,
    sweep,
    async close() {
      open.clear();
      await feed.closeAll();
    },
  };
}
