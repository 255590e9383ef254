import fs from 'node:fs';
import { createWatchBudget, systemWatchLimit, watchBudgetSize, type WatchBudget } from '../../watch/index.ts';
import { startWorkspaceWatch, type SyncResult, type WorkspaceWatch } from './workspace-watch.ts';

/**
 * The checkpoint watchers of one engine, one per workspace folder: started at a workspace's first
 * checkpoint (which does not wait for it), kept while checkpoints come, stopped after a while
 * without one, and all stopped when the engine closes. They share one watch budget.
 */

export interface WatchesOptions {
  /** Folder watches over all workspaces at most (lowered to a quarter of the system's limit). */
  maxWatches: number;
  /** A watcher not synced for this long is stopped. */
  idleMs: number;
  cookieWaitMs: number;
  maxPaths: number;
  /** Events between two sync points from which the queue may have overflowed (default: half the kernel's queue). */
  overflowAt?: number;
  log?(message: string): void;
}

export interface Watches {
  /**
   * The watcher of `root`, started if there is none (`skipDir` then says which folders it leaves
   * out: git's ignored folders), synced: what changed since its previous sync point.
   */
  sync(root: string, skipDir: () => (rel: string) => boolean): Promise<SyncResult>;
  /** Stops the watcher of `root` (its ignore rules changed); the next checkpoint starts a new one. */
  restart(root: string): void;
  /** Folder watches held by all of them. */
  watches(): number;
  close(): void;
}

/** The kernel's inotify queue length (events held before it drops the rest), or null where unknown. */
export function maxQueuedEvents(file = '/proc/sys/fs/inotify/max_queued_events'): number | null {
  try {
    const n = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
    return Number.isFinite(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

/** Used when the queue length cannot be read: the kernel's default. */
const DEFAULT_QUEUE = 16_384;

export function createWatches(o: WatchesOptions): Watches {
  const budget: WatchBudget = createWatchBudget(watchBudgetSize(o.maxWatches, systemWatchLimit()));
  const overflowAt = o.overflowAt ?? Math.floor((maxQueuedEvents() ?? DEFAULT_QUEUE) / 2);
  const byRoot = new Map<string, { watch: WorkspaceWatch; timer: NodeJS.Timeout }>();
  const stop = (root: string) => {
    const got = byRoot.get(root);
    if (!got) return;
    clearTimeout(got.timer);
    got.watch.close();
    byRoot.delete(root);
  };
  const idleTimer = (root: string) => {
    const t = setTimeout(() => stop(root), o.idleMs);
    t.unref();
    return t;
  };
  return {
    async sync(root, skipDir) {
      let got = byRoot.get(root);
      if (got && got.watch.isClosed()) {
        // Failed (out of watches, the folder gone): tried again at the next checkpoint after this one.
        const result = await got.watch.sync();
        stop(root);
        return result;
      }
      if (!got) {
        const watch = startWorkspaceWatch({
          root,
          skipDir: skipDir(),
          budget,
          cookieWaitMs: o.cookieWaitMs,
          maxPaths: o.maxPaths,
          overflowAt,
          log: o.log,
        });
        got = { watch, timer: idleTimer(root) };
        byRoot.set(root, got);
      } else {
        clearTimeout(got.timer);
        got.timer = idleTimer(root);
      }
      return got.watch.sync();
    },
    restart: stop,
    watches: () => {
      let n = 0;
      for (const { watch } of byRoot.values()) n += watch.watches();
      return n;
    },
    close() {
      for (const root of [...byRoot.keys()]) stop(root);
    },
  };
}
