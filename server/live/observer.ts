import type { DiffProgressPayload } from '../../shared/index.ts';
import type { RunObserver } from '../runs/index.ts';
import { feedKey, LiveFeed, type FeedBudget } from './feed.ts';
import { feedIgnoreFor } from './ignore.ts';

export interface LiveFeedObserverOptions {
  maxFiles: number;
  dbPath: string | null;
  emit(payload: DiffProgressPayload): void;
  /** The run's changed paths so far (the engine's `peek`), to catch edits made before the watcher was ready. */
  changedSoFar?(sessionId: string, changeId: string): Promise<string[]>;
  /** True while the engine still holds the run's checkpoint (a TTL eviction closes the feed). */
  hasCheckpoint(sessionId: string, changeId: string): boolean;
  log?(message: string): void;
  intervalMs?: number;
  /** When the feed switches itself off (defaults in LiveFeedOptions). */
  budget?: FeedBudget;
}

/**
 * Connects the live feed to the bridge: a watcher starts after a run's checkpoint is taken (runs
 * only; a tool call is inside its run's feed) and stops when the run completes, fails or expires.
 * Expiry is found by `sweep`, which the server runs as a background job.
 */
export function createLiveFeedObserver(opts: LiveFeedObserverOptions): {
  observer: RunObserver;
  feed: LiveFeed;
  /** Closes the feeds of runs whose checkpoint is gone (the TTL dropped it). */
  sweep(): void;
  close(): Promise<void>;
} {
  const feed = new LiveFeed({
    ...opts.budget,
    maxFiles: opts.maxFiles,
    emit: opts.emit,
    ...(opts.log ? { log: opts.log } : {}),
    ...(opts.intervalMs !== undefined ? { intervalMs: opts.intervalMs } : {}),
    ...(opts.changedSoFar ? { catchUp: (run) => opts.changedSoFar!(run.sessionId, run.changeId) } : {}),
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
    checkpointTaken({ sessionId, runId, changeId, toolCallId, workspace, result }) {
      if (toolCallId !== null) return;
      const run = { sessionId, runId, changeId, root: workspace.root };
      const scan = { scannedFiles: result.scanned_files, truncated: result.truncated };
      if (scan.truncated || scan.scannedFiles > opts.maxFiles) {
        feed.open(run, scan, { skipDir: () => true, keep: async () => [] });
        return;
      }
      open.set(feedKey(sessionId, changeId), { sessionId, changeId });
      feedIgnoreFor(workspace, opts.dbPath, opts.log).then(
        (ignore) => {
          // The run may have ended while the ignore rules were read.
          if (open.has(feedKey(sessionId, changeId))) feed.open(run, scan, ignore);
        },
        (err: unknown) => {
          opts.log?.(`live feed for ${workspace.root} is off: ${(err as Error).message}`);
          open.delete(feedKey(sessionId, changeId));
          opts.emit({
            session_id: sessionId,
            run_id: runId,
            change_id: changeId,
            available: false,
            reason: 'watch_failed',
            touched: [],
            touched_count: 0,
          });
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
