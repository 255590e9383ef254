import { keyFromText, type PathKey } from '../../paths/index.ts';
import {
  inotifyEventsDelivered,
  startFolderWatcher,
  syncPoint,
  type FolderWatcher,
  type WatchBudget,
} from '../../watch/index.ts';
import { isWatchCookie } from '../../workspace/index.ts';

/**
 * The folder watches of one workspace as a checkpoint trusts them: every path the watcher reported
 * since the previous sync point, and whether the watcher can vouch that nothing else changed. A sync
 * point is a cookie file written in the server's own private folder whose event has come back
 * (`watch/sync-point.ts`): the thread's one inotify queue delivers in order, so every change made
 * before it has been delivered too. The watcher cannot vouch (the checkpoint asks git about the whole tree instead) when it is
 * not ready yet, has failed (watch limit, budget, an unwatchable root), a watched folder was removed
 * or moved away (which files went with it no event says), a `.git` entry changed below the root, a
 * name could not be placed, too many paths changed, or more events arrived between two sync points
 * than the kernel's queue holds (it may have overflowed and dropped some: Node does not say).
 */

/** Why the watcher cannot vouch for the paths since the previous sync point. */
export type Unvouched =
  | 'not_ready'
  | 'watch_failed'
  | 'watch_limit'
  | 'watch_budget'
  | 'no_sync_point'
  | 'cookie_timeout'
  | 'no_cookie'
  | 'queue_overflow'
  | 'folder_gone'
  | 'git_entry'
  | 'unplaceable'
  | 'too_many_paths';

/** A sync's answer: `point` numbers a clean sync point (null: none); `changed` is null when it cannot vouch. */
export interface SyncResult {
  /** This sync point's number, or null when the watcher has none (not ready, failed, no cookie came back). */
  point: number | null;
  /** The sync point `changed` starts from (the previous one), when it vouches. */
  since: number | null;
  /** Workspace-relative keys reported since `since`; null when the watcher cannot vouch. */
  changed: Set<PathKey> | null;
  unvouched: Unvouched | null;
}

export interface WorkspaceWatchOptions {
  root: string;
  /** Folders (relative text) not entered: what git ignored whole. */
  skipDir(rel: string): boolean;
  budget: WatchBudget;
  /** How long a sync waits for its cookie's event. */
  cookieWaitMs: number;
  /** Paths since the previous sync point above which a full listing is cheaper: not vouched. */
  maxPaths: number;
  /** Events between two sync points from which the kernel's queue may have overflowed. */
  overflowAt: number;
  log?(message: string): void;
}

export interface WorkspaceWatch {
  readonly root: string;
  sync(): Promise<SyncResult>;
  /** Folder watches held now. */
  watches(): number;
  /** True once it failed or was closed: a new one is needed. */
  isClosed(): boolean;
  close(): void;
}

export function startWorkspaceWatch(o: WorkspaceWatchOptions): WorkspaceWatch {
  let ready = false;
  let failed: Unvouched | null = null;
  let changed = new Set<PathKey>();
  let taint: Unvouched | null = null;
  let point: number | null = null;
  let eventsAt = inotifyEventsDelivered();

  const add = (rels: string[]) => {
    for (const rel of rels) {
      // A cookie an earlier release left in the tree is the server's own, never a change.
      if (isWatchCookie(rel.slice(rel.lastIndexOf('/') + 1))) continue;
      // A name that is not UTF-8 reaches here without its exact bytes: git cannot be asked about it.
      if (rel.includes('\uFFFD')) taint ??= 'unplaceable';
      else if (taint === null) {
        changed.add(keyFromText(rel));
        if (changed.size > o.maxPaths) taint = 'too_many_paths';
      }
    }
  };
  const watcher: FolderWatcher = startFolderWatcher({
    root: o.root,
    skipDir: o.skipDir,
    budget: o.budget,
    onRaw: () => true,
    onPaths: add,
    onFolderGone: () => {
      taint = 'folder_gone';
    },
    onGitEntry: () => {
      taint = 'git_entry';
    },
    onFail: (reason, message) => {
      failed = reason;
      o.log?.(`checkpoint watcher for ${o.root} stopped (${reason}): ${message}`);
    },
    log: o.log,
  });
  void watcher.ready.then((ok) => {
    ready = ok;
    if (!ok) failed ??= 'watch_failed';
  });

  /** Takes what was reported up to now as the answer of a sync point. */
  const cut = (): SyncResult => {
    const since = point;
    const events = inotifyEventsDelivered() - eventsAt;
    eventsAt = inotifyEventsDelivered();
    const got = changed;
    const why: Unvouched | null = since === null ? 'no_sync_point' : events >= o.overflowAt ? 'queue_overflow' : taint;
    changed = new Set();
    taint = null;
    point = (point ?? 0) + 1;
    return { point, since, changed: why === null ? got : null, unvouched: why };
  };

  const sync = async (): Promise<SyncResult> => {
    if (failed !== null || watcher.isClosed())
      return { point: null, since: null, changed: null, unvouched: failed ?? 'watch_failed' };
    if (!ready) return { point: null, since: null, changed: null, unvouched: 'not_ready' };
    const synced = await syncPoint(o.cookieWaitMs);
    if (!synced.ok || failed !== null) {
      if (!synced.ok) o.log?.(`checkpoint watcher for ${o.root}: no sync point (${synced.message})`);
      // A sync point would need the cookie: whatever came before cannot be vouched for.
      point = null;
      return {
        point: null,
        since: null,
        changed: null,
        unvouched: failed ?? (!synced.ok && synced.reason === 'unwritable' ? 'no_cookie' : 'cookie_timeout'),
      };
    }
    // A folder that appeared is walked for its files: they belong to this sync point.
    await watcher.settled();
    return cut();
  };

  return {
    root: o.root,
    sync,
    watches: () => watcher.watches(),
    isClosed: () => watcher.isClosed() || failed !== null,
    close: () => watcher.close(),
  };
}
