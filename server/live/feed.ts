import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { DiffProgressPayload } from '../../shared/index.ts';

/**
 * The live "files touched" feed of an open run: a chokidar watcher on the run's workspace, shared by
 * overlapping runs on the same folder, throttled per run. It is provisional by design: the stored
 * delta always comes from the checkpoint scan, never from these events.
 */

export interface FeedRun {
  sessionId: string;
  runId: string;
  changeId: string;
  /** Real path of the workspace. */
  root: string;
}

/** The checkpoint's ignore rules as the feed needs them. */
export interface FeedIgnore {
  /** Sync: folders (relative, `/`-separated) the watcher must not enter. */
  skipDir(rel: string): boolean;
  /** Async: the touched paths that are not ignored. */
  keep(rels: string[]): Promise<string[]>;
}

export interface LiveFeedOptions {
  /** Start a watcher only when the checkpoint scanned at most this many files. */
  maxFiles: number;
  /** At most one progress event per run per interval (ms). Default 500. */
  intervalMs?: number;
  /** At most this many paths listed in one event (the count stays exact). Default 200. */
  maxListed?: number;
  emit(payload: DiffProgressPayload): void;
  /**
   * Paths a run changed before a new watcher was ready (a watcher needs a moment to start; edits made
   * right after the checkpoint would otherwise be missed). Called once per run that was waiting.
   */
  catchUp?(run: FeedRun): Promise<string[]>;
  /** Logs a watcher problem that did not stop the run. */
  log?(message: string): void;
  /**
   * Watcher events one folder may raise within `eventWindowMs` before its feed switches itself off
   * (`too_many_events`). Default 5,000 per second.
   */
  maxEventsPerWindow?: number;
  /** The window of `maxEventsPerWindow` (ms). Default 1,000. */
  eventWindowMs?: number;
  /** Distinct touched paths one run may collect before its feed switches itself off (`too_many_paths`). Default 20,000. */
  maxTrackedPaths?: number;
  /** Clock (ms) of the event window. Default Date.now. */
  now?: () => number;
}

/** The bounds after which a feed switches itself off. */
export type FeedBudget = Pick<LiveFeedOptions, 'maxEventsPerWindow' | 'eventWindowMs' | 'maxTrackedPaths'>;

/** What the feed did with watcher events so far (tests and diagnostics). */
export interface FeedStats {
  /** Watcher events taken into account, over all folders. */
  eventsHandled: number;
  /** Feeds switched off because events came faster than the budget. */
  switchedOff: number;
}

interface RunState {
  run: FeedRun;
  ignore: FeedIgnore;
  touched: Set<string>;
  pending: Set<string>;
  timer: NodeJS.Timeout | null;
  lastEmit: number;
  flushing: Promise<void> | null;
}

interface Shared {
  watcher: FSWatcher;
  ready: boolean;
  /** Settles when the watcher is ready or closed, whichever comes first. */
  settled: Promise<void>;
  markSettled: () => void;
  runs: Map<string, RunState>;
  /** Set once the feed of this folder switched itself off; later events are dropped unseen. */
  off: boolean;
  windowStartMs: number;
  windowEvents: number;
}

/** The map key of one run's feed. */
export const feedKey = (sessionId: string, changeId: string) => `${sessionId}\u0000${changeId}`;

export class LiveFeed {
  private readonly byRoot = new Map<string, Shared>();
  private readonly byRun = new Map<string, string>();
  private readonly intervalMs: number;
  private readonly maxListed: number;
  private readonly maxEvents: number;
  private readonly windowMs: number;
  private readonly maxTracked: number;
  private readonly now: () => number;
  private readonly counts: FeedStats = { eventsHandled: 0, switchedOff: 0 };

  constructor(private readonly opts: LiveFeedOptions) {
    this.intervalMs = opts.intervalMs ?? 500;
    this.maxListed = opts.maxListed ?? 200;
    this.maxEvents = opts.maxEventsPerWindow ?? 5_000;
    this.windowMs = opts.eventWindowMs ?? 1_000;
    this.maxTracked = opts.maxTrackedPaths ?? 20_000;
    this.now = opts.now ?? Date.now;
  }

  /** Starts (or joins) the watcher for a run whose checkpoint was just taken; says so when it cannot. */
  open(run: FeedRun, scan: { scannedFiles: number; truncated: boolean }, ignore: FeedIgnore): boolean {
    const k = feedKey(run.sessionId, run.changeId);
    if (this.byRun.has(k)) return true;
    if (scan.truncated || scan.scannedFiles > this.opts.maxFiles) {
      this.unavailable(run, 'too_many_files');
      return false;
    }
    let shared = this.byRoot.get(run.root);
    if (!shared) {
      try {
        shared = this.startWatcher(run.root, ignore);
      } catch (err) {
        this.opts.log?.(`live feed for ${run.root} could not start: ${(err as Error).message}`);
        this.unavailable(run, 'watch_failed');
        return false;
      }
      this.byRoot.set(run.root, shared);
    }
    shared.runs.set(k, {
      run,
      ignore,
      touched: new Set(),
      pending: new Set(),
      timer: null,
      lastEmit: 0,
      flushing: null,
    });
    this.byRun.set(k, run.root);
    return true;
  }

  private unavailable(run: FeedRun, reason: string): void {
    this.opts.emit({
      session_id: run.sessionId,
      run_id: run.runId,
      change_id: run.changeId,
      available: false,
      reason,
      touched: [],
      touched_count: 0,
    });
  }

  private startWatcher(root: string, ignore: FeedIgnore): Shared {
    let markSettled = () => {};
    const settled = new Promise<void>((resolve) => (markSettled = resolve));
    const shared: Shared = {
      watcher: watch(root, {
        ignoreInitial: true,
        followSymlinks: false,
        persistent: true,
        ignorePermissionErrors: true,
        ignored: (abs: string, stats?: { isDirectory(): boolean }) => {
          const rel = path.relative(root, abs).split(path.sep).join('/');
          if (rel === '' || rel.startsWith('..')) return false;
          const base = rel.slice(rel.lastIndexOf('/') + 1);
          if (base === '.git') return true;
          return stats?.isDirectory() === true && ignore.skipDir(rel);
        },
      }),
      runs: new Map(),
      ready: false,
      settled,
      markSettled,
      off: false,
      windowStartMs: this.now(),
      windowEvents: 0,
    };
    // Every raw watcher event is counted before chokidar works on it (a stat, a new watch): a
    // rename storm costs the process in chokidar itself, so only closing the watcher stops it.
    shared.watcher.on('raw', () => this.countEvent(root, shared));
    shared.watcher.on('ready', () => {
      shared.ready = true;
      shared.markSettled();
      for (const state of shared.runs.values()) this.catchUp(state);
    });
    shared.watcher.on('all', (event: string, abs: string) => {
      if (shared.off || event === 'addDir' || event === 'unlinkDir') return;
      const rel = path.relative(root, abs).split(path.sep).join('/');
      if (rel === '' || rel.startsWith('..')) return;
      for (const state of [...shared.runs.values()]) {
        state.pending.add(rel);
        if (state.pending.size + state.touched.size > this.maxTracked) {
          // A bounded feed: past this many distinct paths the list is no use to a person anyway.
          this.switchOff(state, 'too_many_paths');
          continue;
        }
        this.schedule(state);
      }
    });
    shared.watcher.on('error', (err: unknown) => {
      const code = (err as NodeJS.ErrnoException).code;
      this.opts.log?.(`live feed watcher on ${root}: ${(err as Error).message}`);
      if (code === 'ENOSPC' || code === 'EMFILE') {
        // Out of inotify watches: the feed for this folder is off; the runs go on without it.
        for (const state of [...shared.runs.values()]) {
          this.unavailable(state.run, 'watch_limit');
          void this.close(state.run.sessionId, state.run.changeId);
        }
      }
    });
    return shared;
  }

  /** Counts one watcher event of a folder; past the budget of the window the folder's feed goes off. */
  private countEvent(root: string, shared: Shared): void {
    if (shared.off) return;
    this.counts.eventsHandled++;
    const t = this.now();
    if (t - shared.windowStartMs >= this.windowMs) {
      shared.windowStartMs = t;
      shared.windowEvents = 0;
    }
    if (++shared.windowEvents <= this.maxEvents) return;
    shared.off = true;
    this.counts.switchedOff++;
    this.opts.log?.(
      `live feed for ${root} switched off: more than ${this.maxEvents} file events within ${this.windowMs} ms`,
    );
    for (const state of [...shared.runs.values()]) this.switchOff(state, 'too_many_events');
  }

  /** Ends one run's feed and says why (the run and its stored delta go on without it). */
  private switchOff(state: RunState, reason: string): void {
    state.pending.clear();
    state.touched.clear();
    this.unavailable(state.run, reason);
    this.close(state.run.sessionId, state.run.changeId).catch((err: unknown) => {
      this.opts.log?.(`live feed watcher on ${state.run.root} did not close: ${(err as Error).message}`);
    });
  }

  private catchUp(state: RunState): void {
    if (!this.opts.catchUp) return;
    this.opts.catchUp(state.run).then(
      (paths) => {
        if (paths.length === 0 || !this.isCurrent(state)) return;
        for (const p of paths) state.pending.add(p);
        this.schedule(state);
      },
      () => {
        /* provisional feed: the stored delta is unaffected */
      },
    );
  }

  private schedule(state: RunState): void {
    if (state.timer) return;
    const wait = Math.max(0, state.lastEmit + this.intervalMs - Date.now());
    state.timer = setTimeout(() => {
      state.timer = null;
      state.flushing = this.flush(state).finally(() => (state.flushing = null));
    }, wait);
    state.timer.unref();
  }

  private async flush(state: RunState): Promise<void> {
    if (state.pending.size === 0) return;
    const batch = [...state.pending];
    state.pending.clear();
    let kept: string[];
    try {
      kept = await state.ignore.keep(batch);
    } catch {
      kept = batch;
    }
    if (!this.isCurrent(state)) return; // closed or switched off meanwhile
    const before = state.touched.size;
    for (const p of kept) state.touched.add(p);
    if (state.touched.size === before) return;
    state.lastEmit = Date.now();
    const listed = [...state.touched].sort().slice(0, this.maxListed);
    this.opts.emit({
      session_id: state.run.sessionId,
      run_id: state.run.runId,
      change_id: state.run.changeId,
      available: true,
      touched: listed,
      touched_count: state.touched.size,
    });
  }

  /** Stops following a run; the shared watcher closes with its last run. */
  async close(sessionId: string, changeId: string): Promise<void> {
    const k = feedKey(sessionId, changeId);
    const root = this.byRun.get(k);
    if (root === undefined) return;
    this.byRun.delete(k);
    const shared = this.byRoot.get(root);
    if (!shared) return;
    const state = shared.runs.get(k);
    if (state?.timer) clearTimeout(state.timer);
    shared.runs.delete(k);
    if (shared.runs.size === 0) {
      this.byRoot.delete(root);
      shared.markSettled();
      await shared.watcher.close();
    }
  }

  /** True while `state` is still the live state of its run (not closed, not switched off). */
  private isCurrent(state: RunState): boolean {
    const shared = this.byRoot.get(state.run.root);
    return shared?.runs.get(feedKey(state.run.sessionId, state.run.changeId)) === state;
  }

  async closeAll(): Promise<void> {
    for (const k of [...this.byRun.keys()]) {
      const [sessionId, changeId] = k.split('\u0000') as [string, string];
      await this.close(sessionId, changeId);
    }
  }

  /**
   * Resolves once the watcher of a run's folder reports every later file event: true when it is
   * ready, false when the run is not followed or its watcher closed first. Edits made before that
   * moment reach the run only through `catchUp`.
   */
  async ready(sessionId: string, changeId: string): Promise<boolean> {
    const root = this.byRun.get(feedKey(sessionId, changeId));
    if (root === undefined) return false;
    const shared = this.byRoot.get(root);
    if (!shared) return false;
    await shared.settled;
    return shared.ready && this.byRoot.get(root) === shared;
  }

  /** Watchers currently open (one per followed folder). */
  watcherCount(): number {
    return this.byRoot.size;
  }

  /** Counters of the events handled and of the feeds switched off. */
  stats(): FeedStats {
    return { ...this.counts };
  }

  isOpen(sessionId: string, changeId: string): boolean {
    return this.byRun.has(feedKey(sessionId, changeId));
  }
}
