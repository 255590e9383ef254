import fs from 'node:fs';
import { closeFolder, openFolderInside, pathBelow, safeRoot, withReachablePath, type SafeRoot } from '../fs/index.ts';
import { displayPath, joinKey, keyFromBytes, type PathKey } from '../paths/index.ts';
import type { WatchBudget } from './watch-budget.ts';

/**
 * One watch per folder of a workspace (never one per file): a folder's watch reports the names of
 * its entries that were created, written, renamed or removed. Each folder is opened without
 * following links and checked to lie below the root before it is watched through that very
 * descriptor, so a folder swapped for a symlink cannot make the feed watch outside the workspace.
 * Folders created later are watched as they appear, and the files found in them are reported.
 */

/** Why a folder watcher stopped: out of the feed's budget, out of system watches, or unusable. */
export type WatchFailure = 'watch_budget' | 'watch_limit' | 'watch_failed';

export interface FolderWatcherOptions {
  root: string;
  /** True for a folder (relative, `/`-separated) the watcher must not enter. */
  skipDir(rel: string): boolean;
  budget: WatchBudget;
  /** Told of every raw event before any work is done on it; false: drop it (the caller is closing the watcher). */
  onRaw(): boolean;
  /** Relative paths of files created, written, renamed or removed. */
  onPaths(rels: string[]): void;
  /** A watched folder was removed or moved away: which files went with it only a full check knows. */
  onFolderGone(rel: string): void;
  /** A `.git` entry was created, removed or changed in a watched folder (never entered): `rel` is that folder. */
  onGitEntry?(rel: string): void;
  /** The watcher could not go on; it has already closed itself. `held`: the watches it held then. */
  onFail(reason: WatchFailure, message: string, held: number): void;
  log?(message: string): void;
  /** Folders read between two yields to the event loop while walking. Default 16. */
  foldersPerSlice?: number;
}

export interface FolderWatcher {
  /** True once every folder found is watched; false when the watcher failed or closed first. */
  ready: Promise<boolean>;
  close(): void;
  /** Folder watches held now. */
  watches(): number;
  isClosed(): boolean;
  /** Resolves once no folder that appeared is still being walked (its files are all reported). */
  settled(): Promise<void>;
}

interface Watched {
  watcher: fs.FSWatcher;
  ino: number;
  /** The name the system gives an event about the watched folder itself (the descriptor's number). */
  selfName: PathKey;
}

const LIMIT_CODES = new Set(['ENOSPC', 'EMFILE', 'ENFILE']);
const errCode = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code;
const baseOf = (key: PathKey) => key.slice(key.lastIndexOf('/') + 1);
const text = (key: PathKey) => displayPath(key).path;
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Raw events delivered to every folder watcher of this process since it started. All of them share
 * the thread's one inotify queue, so a checkpoint that counts them between two of its own sync
 * points knows whether that queue could have held more than it can keep (and dropped some).
 */
let delivered = 0;
export function inotifyEventsDelivered(): number {
  return delivered;
}
/** Counts an event of another watch on the same queue (the sync points' folder). */
export function countInotifyEvent(): void {
  delivered++;
}

export function startFolderWatcher(o: FolderWatcherOptions): FolderWatcher {
  const folders = new Map<PathKey, Watched>();
  const perSlice = o.foldersPerSlice ?? 16;
  let closed = false;
  let root: SafeRoot;

  const close = () => {
    if (closed) return;
    closed = true;
    for (const f of folders.values()) f.watcher.close();
    o.budget.release(folders.size);
    folders.clear();
  };
  const fail = (reason: WatchFailure, message: string) => {
    if (closed) return;
    const held = folders.size;
    close();
    o.onFail(reason, message, held);
  };
  const skipped = (key: PathKey) => baseOf(key) === '.git' || o.skipDir(text(key));

  const unwatch = (key: PathKey) => {
    const f = folders.get(key);
    if (!f) return;
    f.watcher.close();
    folders.delete(key);
    o.budget.release(1);
  };

  /** Stops watching a folder that went away and every folder below it. */
  const gone = (key: PathKey) => {
    const prefix = `${key}/`;
    for (const k of [...folders.keys()]) if (k === key || k.startsWith(prefix)) unwatch(k);
    o.onFolderGone(text(key));
  };

  /** lstat of a path below the root; one too long for one call is measured through its folder. */
  const lstatBelow = (key: PathKey): fs.Stats => withReachablePath(pathBelow(root.root, key), (p) => fs.lstatSync(p));

  /** True while the watched folder still stands at its name (not removed, not moved away). */
  const stillThere = (key: PathKey, f: Watched) => {
    try {
      const st = lstatBelow(key);
      return st.isDirectory() && st.ino === f.ino;
    } catch {
      return false;
    }
  };

  const walking = new Set<Promise<unknown>>();
  const onEvent = (dir: PathKey, type: string, name: Buffer | null) => {
    delivered++;
    if (closed || !o.onRaw()) return;
    const f = folders.get(dir);
    if (!f) return; // a watch closed meanwhile
    if (name === null) {
      // The system did not say which entry: only a full check can tell.
      o.onFolderGone(text(dir));
      return;
    }
    const nameKey = keyFromBytes(name);
    if (type === 'rename' && nameKey === f.selfName && !stillThere(dir, f)) {
      gone(dir);
      return;
    }
    const rel = joinKey(dir, nameKey);
    if (nameKey === '.git') {
      o.onGitEntry?.(text(dir));
      return;
    }
    const sub = folders.get(rel);
    if (sub) {
      if (type === 'rename' && !stillThere(rel, sub)) gone(rel);
      return; // otherwise a change of the folder's own attributes
    }
    if (type === 'rename') {
      let isDir = false;
      try {
        isDir = lstatBelow(rel).isDirectory();
      } catch {
        // gone again: reported as a touched path below
      }
      if (isDir) {
        if (!skipped(rel)) {
          const walked = walk(rel, true).catch((err: unknown) => {
            o.log?.(`live feed: new folder ${text(rel)} in ${o.root} not watched: ${(err as Error).message}`);
          });
          walking.add(walked);
          void walked.finally(() => walking.delete(walked));
        }
        return;
      }
    }
    o.onPaths([text(rel)]);
  };

  /** Watches one folder and lists it; null when it cannot be (vanished, unreadable, or the watcher failed). */
  const watchFolder = (key: PathKey): fs.Dirent<Buffer>[] | null => {
    const old = folders.get(key);
    if (old) unwatch(key); // a folder created again under a name watched before
    if (!o.budget.take()) {
      fail('watch_budget', `more than ${o.budget.size} folders to watch`);
      return null;
    }
    const folder = openFolderInside(root, key);
    if (!folder) {
      o.budget.release(1);
      return null;
    }
    try {
      const ino = fs.fstatSync(folder.fd).ino;
      let watcher: fs.FSWatcher;
      try {
        // The descriptor's path names the folder that was checked, whatever happens to its name.
        watcher = fs.watch(folder.base.slice(0, -1), { persistent: false, encoding: 'buffer' }, (type, name) =>
          onEvent(key, type, name),
        );
      } catch (err) {
        o.budget.release(1);
        if (LIMIT_CODES.has(errCode(err) ?? '')) fail('watch_limit', (err as Error).message);
        else o.log?.(`live feed: folder ${text(key) || '.'} of ${o.root} not watched: ${(err as Error).message}`);
        return null;
      }
      watcher.on('error', (err: Error) => {
        if (LIMIT_CODES.has(errCode(err) ?? '')) fail('watch_limit', err.message);
        else {
          o.log?.(`live feed: watch of ${text(key) || '.'} in ${o.root} ended: ${err.message}`);
          if (folders.get(key)?.watcher === watcher) unwatch(key);
        }
      });
      folders.set(key, { watcher, ino, selfName: baseOf(folder.base.slice(0, -1)) });
      try {
        return fs.readdirSync(folder.base, { withFileTypes: true, encoding: 'buffer' });
      } catch (err) {
        o.log?.(`live feed: folder ${text(key) || '.'} of ${o.root} not listed: ${(err as Error).message}`);
        return [];
      }
    } finally {
      closeFolder(folder);
    }
  };

  /** Watches `start` and every folder below it; with `report`, the files found are new and reported. */
  const walk = async (start: PathKey, report: boolean): Promise<boolean> => {
    const stack = [start];
    let found: string[] = [];
    let read = 0;
    while (stack.length > 0) {
      if (closed) return false;
      const key = stack.pop()!;
      const entries = watchFolder(key);
      if (closed) return false;
      if (entries === null) {
        if (key === '') {
          fail('watch_failed', `the workspace folder ${o.root} could not be opened for watching`);
          return false;
        }
        continue;
      }
      for (const d of entries) {
        const child = joinKey(key, keyFromBytes(d.name));
        if (baseOf(child) === '.git') {
          // Never entered nor reported; in a folder that appeared, a repository came with it.
          if (report) o.onGitEntry?.(text(key));
          continue;
        }
        if (d.isDirectory()) {
          if (!skipped(child)) stack.push(child);
        } else if (report) found.push(text(child));
      }
      if (++read % perSlice === 0) {
        if (found.length > 0) o.onPaths(found);
        found = [];
        await yieldToLoop();
      }
    }
    if (found.length > 0 && !closed) o.onPaths(found);
    return !closed;
  };

  let ready: Promise<boolean>;
  try {
    root = safeRoot(o.root);
    // Never synchronous: the caller registers the watcher before any failure can be reported.
    ready = Promise.resolve().then(() => walk('', false));
  } catch (err) {
    ready = Promise.resolve(false);
    queueMicrotask(() => fail('watch_failed', (err as Error).message));
  }
  const settled = async (): Promise<void> => {
    while (walking.size > 0) await Promise.all([...walking]);
  };
  return { ready, close, watches: () => folders.size, isClosed: () => closed, settled };
}
