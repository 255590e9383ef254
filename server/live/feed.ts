import type { DiffProgressPayload, LiveFeedMode } from '../../shared/index.ts';
import type { CheckDelayOptions } from './check-delay.ts';
import { startFolderWatcher, type FolderWatcher } from '../watch/index.ts';
import { afterCheck, newestFirst, touchAll } from './touched-list.ts';
import { nodeOneShotTimers, startPoller, type OneShotTimers, type Poller } from './poller.ts';
import { createWatchBudget, type WatchBudget } from '../watch/index.ts';

/**
 * The live "files touched" feed of an open run, on a workspace of any size. It watches folders (one
 * watch per folder, shared by overlapping runs on the same workspace, within a watch budget), and
 * where it cannot watch (too many folders, out of system watches, an event storm, too many touched
 * paths, no ignore rules) it checks the run's changed paths periodically instead, at a pace that
 * follows what a check costs. It is provisional by design: the stored delta always comes from the
 * checkpoint scan, never from this feed.
 */

export interface FeedRun {
  sessionId: string;
  runId: string;
  changeId: string;
  /** Real path of the workspace. */
  root: string;
}

/** The checkpoint's ignore rules as the watcher needs them. */
export interface FeedIgnore {
  /** Sync: folders (relative, `/`-separated) the watcher must not enter. */
  skipDir(rel: string): boolean;
  /** Async: the touched paths that are not ignored. */
  keep(rels: string[]): Promise<string[]>;
}

export interface LiveFeedOptions {
  /** Folder watches all runs' feeds together may hold; past it a workspace is checked periodically. */
  maxWatches: number;
  /** At most one progress event per run per interval while watching (ms). Default 500. */
  intervalMs?: number;
  /** At most this many paths listed in one event (the count stays exact). Default 200. */
  maxListed?: number;
  emit(payload: DiffProgressPayload): void;
  /**
   * The run's changed paths so far as the engine sees them (its ignore rules, its checkpoint), or
   * null once the run's checkpoint is gone. It is the periodic check, and while watching it catches
   * up on edits made before a watcher was ready or inside a folder that went away.
   */
  changedSoFar?(run: FeedRun): Promise<string[] | null>;
  /** Logs why a feed changed mode or stopped. */
  log?(message: string): void;
  /**
   * Watcher events one workspace may raise within `eventWindowMs` before its watcher is closed and
   * its runs are checked periodically instead (`too_many_events`). Default 5,000 per second.
   */
  maxEventsPerWindow?: number;
  /** The window of `maxEventsPerWindow` (ms). Default 1,000. */
  eventWindowMs?: number;
  /** Distinct touched paths one watched run may collect before it is checked periodically instead (`too_many_paths`). Default 20,000. */
  maxTrackedPaths?: number;
  /** Clock (ms) of the event window and of the check costs. Default Date.now. */
  now?: () => number;
  /** Timers of the periodic checks. Default Node's (unref'd). */
  timers?: OneShotTimers;
  /** Pace of the periodic checks (defaults in check-delay.ts). */
  checkDelay?: Partial<CheckDelayOptions>;
}

/** The bounds after which a watched run is checked periodically instead. */
export type FeedBudget = Pick<
  LiveFeedOptions,
  'maxEventsPerWindow' | 'eventWindowMs' | 'maxTrackedPaths' | 'checkDelay'
>;

/** What the feed did so far (tests and diagnostics). */
export interface FeedStats {
  /** Watcher events taken into account, over all workspaces. */
  eventsHandled: number;
  /** Watchers closed because events came faster than the budget. */
  switchedOff: number;
  /** Runs that went from watching (or from the start) to periodic checks. */
  switchedToPoll: number;
  /** Periodic checks started. */
  checks: number;
}

/** What the feed holds open now: each is zero once every run it followed has ended. */
export interface FeedHandles {
  /** Workspace watchers (one per watched workspace). */
  watchers: number;
  /** Folder watches, over all workspaces. */
  folderWatches: number;
  /** Runs being checked periodically (a check running or the next one scheduled). */
  pollers: number;
  /** Progress events waiting for their throttle interval. */
  throttleTimers: number;
  /** Runs followed, in any mode. */
  runs: number;
}

interface RunState {
  run: FeedRun;
  ignore: FeedIgnore | null;
  mode: LiveFeedMode;
  /** Touched paths, least recently touched first. */
  touched: Set<string>;
  /** In poll mode: the exact number of changed paths of the last check (`touched` may hold fewer). */
  count: number;
  pending: Set<string>;
  timer: NodeJS.Timeout | null;
  lastEmit: number;
  poller: Poller | null;
  /** Why the run is checked periodically. */
  pollReason: string | null;
  /** What the last progress event said, to send only news. */
  lastSent: string;
  catchingUp: boolean;
  catchUpAgain: boolean;
}

interface Shared {
  root: string;
  watcher: FolderWatcher;
  ready: boolean;
  /** Settles when the watcher is ready or closed, whichever comes first. */
  settled: Promise<void>;
  markSettled: () => void;
  runs: Map<string, RunState>;
  /** Set once a storm closed the watcher; later events are dropped unseen. */
  off: boolean;
  windowStartMs: number;
  windowEvents: number;
}

/** How long a workspace found to have too many folders is polled without trying to watch it again (ms). */
const OVER_BUDGET_MEMORY_MS = 10 * 60_000;
/** Workspaces remembered as too big to watch (the oldest is forgotten first). */
const OVER_BUDGET_REMEMBERED = 64;

/** The map key of one run's feed. */
export const feedKey = (sessionId: string, changeId: string) => `${sessionId}\u0000${changeId}`;

export class LiveFeed {
  private readonly byRoot = new Map<string, Shared>();
  private readonly byRun = new Map<string, RunState>();
  private readonly intervalMs: number;
  private readonly maxListed: number;
  private readonly maxEvents: number;
  private readonly windowMs: number;
  private readonly maxTracked: number;
  private readonly now: () => number;
  private readonly timers: OneShotTimers;
  private readonly budget: WatchBudget;
  private readonly counts: FeedStats = { eventsHandled: 0, switchedOff: 0, switchedToPoll: 0, checks: 0 };
  /** Workspaces found to have more folders than the budget, and when: later runs there poll at once. */
  private readonly overBudget = new Map<string, number>();

  constructor(private readonly opts: LiveFeedOptions) {
    this.intervalMs = opts.intervalMs ?? 500;
    this.maxListed = opts.maxListed ?? 200;
    this.maxEvents = opts.maxEventsPerWindow ?? 5_000;
    this.windowMs = opts.eventWindowMs ?? 1_000;
    this.maxTracked = opts.maxTrackedPaths ?? 20_000;
    this.now = opts.now ?? Date.now;
    this.timers = opts.timers ?? nodeOneShotTimers;
    this.budget = createWatchBudget(opts.maxWatches);
  }

  /**
   * Follows a run whose checkpoint was just taken: watches its workspace with `ignore`, or checks it
   * periodically when `ignore` is null (the rules could not be read). Returns the mode it starts in,
   * or null when the run cannot be followed at all (said with `available: false`).
   */
  open(run: FeedRun, ignore: FeedIgnore | null): LiveFeedMode | null {
    const k = feedKey(run.sessionId, run.changeId);
    const known = this.byRun.get(k);
    if (known) return known.mode;
    const state: RunState = {
      run,
      ignore,
      mode: 'watch',
      touched: new Set(),
      count: 0,
      pending: new Set(),
      timer: null,
      lastEmit: 0,
      poller: null,
      pollReason: null,
      lastSent: '',
      catchingUp: false,
      catchUpAgain: false,
    };
    this.byRun.set(k, state);
    if (ignore === null) {
      this.poll(state, 'watch_failed');
      return this.byRun.get(k)?.mode ?? null;
    }
    let shared = this.byRoot.get(run.root);
    const foundTooBig = this.overBudget.get(run.root);
    if (!shared && foundTooBig !== undefined) {
      // Walking up to the budget again only to give up again would cost every run the same.
      if (this.now() - foundTooBig < OVER_BUDGET_MEMORY_MS) {
        this.poll(state, 'watch_budget');
        return this.byRun.get(k)?.mode ?? null;
      }
      this.overBudget.delete(run.root);
    }
    if (!shared) {
      shared = this.startWatcher(run.root, ignore);
      this.byRoot.set(run.root, shared);
    }
    shared.runs.set(k, state);
    // Joining a watcher that is already up: what changed since the checkpoint is caught up at once.
    if (shared.ready) this.catchUp(state);
    return 'watch';
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
      root,
      watcher: null as unknown as FolderWatcher,
      runs: new Map(),
      ready: false,
      settled,
      markSettled,
      off: false,
      windowStartMs: this.now(),
      windowEvents: 0,
    };
    shared.watcher = startFolderWatcher({
      root,
      skipDir: (rel) => ignore.skipDir(rel),
      budget: this.budget,
      onRaw: () => this.countEvent(shared),
      onPaths: (rels) => {
        for (const state of [...shared.runs.values()]) {
          for (const rel of rels) state.pending.add(rel);
          if (state.pending.size + state.touched.size > this.maxTracked) {
            // Past this many distinct paths a watched list costs memory for little use: the
            // engine's own check keeps the count exact from here on.
            this.poll(state, 'too_many_paths');
            continue;
          }
          this.schedule(state);
        }
      },
      onFolderGone: () => {
        for (const state of shared.runs.values()) this.catchUp(state);
      },
      onFail: (reason, message, held) => {
        this.opts.log?.(`live feed for ${root}: stopped watching (${reason}: ${message})`);
        // Too big by itself, not merely crowded out by other workspaces' watches.
        if (reason === 'watch_budget' && held >= this.budget.size) this.rememberOverBudget(root);
        this.watcherGone(shared, reason);
      },
      ...(this.opts.log ? { log: this.opts.log } : {}),
    });
    shared.watcher.ready.then(
      (ok) => {
        shared.markSettled();
        if (!ok || this.byRoot.get(root) !== shared) return;
        shared.ready = true;
        for (const state of shared.runs.values()) this.catchUp(state);
      },
      (err: unknown) => {
        this.opts.log?.(`live feed for ${root}: watching failed: ${(err as Error).message}`);
        shared.watcher.close();
        this.watcherGone(shared, 'watch_failed');
      },
    );
    return shared;
  }

  private rememberOverBudget(root: string): void {
    if (this.overBudget.size >= OVER_BUDGET_REMEMBERED) {
      const oldest = this.overBudget.keys().next().value;
      if (oldest !== undefined) this.overBudget.delete(oldest);
    }
    this.overBudget.set(root, this.now());
  }

  /** The watcher of a workspace is closed: its runs go on with periodic checks. */
  private watcherGone(shared: Shared, reason: string): void {
    if (this.byRoot.get(shared.root) === shared) this.byRoot.delete(shared.root);
    shared.markSettled();
    for (const state of [...shared.runs.values()]) this.poll(state, reason);
    shared.runs.clear();
  }

  /** Counts one watcher event of a workspace; past the budget of the window its watcher closes. */
  private countEvent(shared: Shared): boolean {
    if (shared.off) return false;
    this.counts.eventsHandled++;
    const t = this.now();
    if (t - shared.windowStartMs >= this.windowMs) {
      shared.windowStartMs = t;
      shared.windowEvents = 0;
    }
    if (++shared.windowEvents <= this.maxEvents) return true;
    // Every raw event costs the process something, so a storm (a build, a rename loop) is not
    // followed event by event: the watcher closes and the runs are checked periodically.
    shared.off = true;
    this.counts.switchedOff++;
    this.opts.log?.(
      `live feed for ${shared.root}: more than ${this.maxEvents} file events within ${this.windowMs} ms, checking periodically instead`,
    );
    shared.watcher.close();
    this.watcherGone(shared, 'too_many_events');
    return false;
  }

  /** Leaves the workspace watcher (closing it with its last run) and checks the run periodically. */
  private poll(state: RunState, reason: string): void {
    const k = feedKey(state.run.sessionId, state.run.changeId);
    this.detach(state);
    state.pending.clear();
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
    const check = this.opts.changedSoFar;
    if (!check) {
      this.byRun.delete(k);
      this.unavailable(state.run, reason);
      return;
    }
    this.counts.switchedToPoll++;
    this.opts.log?.(`live feed for ${state.run.root}: run ${state.run.runId} is checked periodically (${reason})`);
    state.mode = 'poll';
    state.pollReason = reason;
    state.poller = startPoller({
      check: () => {
        this.counts.checks++;
        return check(state.run);
      },
      onResult: (paths, nextInMs) => this.pollResult(state, paths, nextInMs),
      onEnd: () => void this.close(state.run.sessionId, state.run.changeId),
      onError: (err) =>
        this.opts.log?.(
          `live feed for ${state.run.root}: a check of run ${state.run.runId} failed: ${(err as Error).message}`,
        ),
      onFailed: () => {
        if (this.byRun.get(k) !== state) return;
        this.byRun.delete(k);
        this.opts.log?.(
          `live feed for ${state.run.root}: run ${state.run.runId} is no longer followed (checks keep failing)`,
        );
        this.unavailable(state.run, 'check_failed');
      },
      now: this.now,
      timers: this.timers,
      sharers: () => this.pollingRuns(),
      ...(this.opts.checkDelay ? { delay: this.opts.checkDelay } : {}),
    });
  }

  private pollingRuns(): number {
    let n = 0;
    for (const s of this.byRun.values()) if (s.poller?.active()) n++;
    return n;
  }

  private pollResult(state: RunState, paths: string[], nextInMs: number): void {
    if (!this.isCurrent(state)) return;
    state.touched = afterCheck(state.touched, paths, this.maxTracked);
    state.count = new Set(paths).size;
    this.send(state, nextInMs);
  }

  /** Asks the engine what changed so far and adds it to a watched run's touched paths (one ask at a time). */
  private catchUp(state: RunState): void {
    const check = this.opts.changedSoFar;
    if (!check || state.mode !== 'watch') return;
    if (state.catchingUp) {
      state.catchUpAgain = true;
      return;
    }
    state.catchingUp = true;
    check(state.run)
      .then(
        (paths) => {
          if (!paths || paths.length === 0 || !this.isCurrent(state) || state.mode !== 'watch') return;
          // Only what the watcher has not seen: a path it already listed keeps its place by recency.
          const unseen = paths.filter((p) => !state.touched.has(p) && !state.pending.has(p));
          if (unseen.length === 0) return;
          for (const p of unseen) state.pending.add(p);
          this.schedule(state);
        },
        (err: unknown) => {
          // Provisional feed: the stored delta is unaffected; the watcher's own events still count.
          this.opts.log?.(`live feed for ${state.run.root}: catching up failed: ${(err as Error).message}`);
        },
      )
      .finally(() => {
        state.catchingUp = false;
        if (state.catchUpAgain && this.isCurrent(state)) {
          state.catchUpAgain = false;
          this.catchUp(state);
        }
      });
  }

  private schedule(state: RunState): void {
    if (state.timer) return;
    const wait = Math.max(0, state.lastEmit + this.intervalMs - Date.now());
    state.timer = setTimeout(() => {
      state.timer = null;
      void this.flush(state);
    }, wait);
    state.timer.unref();
  }

  private async flush(state: RunState): Promise<void> {
    if (state.pending.size === 0) return;
    const batch = [...state.pending];
    state.pending.clear();
    let kept: string[];
    try {
      kept = state.ignore ? await state.ignore.keep(batch) : batch;
    } catch (err) {
      this.opts.log?.(`live feed for ${state.run.root}: ignore rules not applied: ${(err as Error).message}`);
      kept = batch;
    }
    if (!this.isCurrent(state) || state.mode !== 'watch') return; // closed or switched meanwhile
    if (kept.length === 0) return;
    touchAll(state.touched, kept);
    state.count = state.touched.size;
    state.lastEmit = Date.now();
    this.send(state, null);
  }

  /** Sends the run's progress when it says something new. */
  private send(state: RunState, checkIntervalMs: number | null): void {
    const listed = newestFirst(state.touched, this.maxListed);
    const payload: DiffProgressPayload = {
      session_id: state.run.sessionId,
      run_id: state.run.runId,
      change_id: state.run.changeId,
      available: true,
      mode: state.mode,
      ...(state.mode === 'poll' && state.pollReason ? { reason: state.pollReason } : {}),
      // Whole seconds: what a person reads, and a jitter of the measured cost is no news.
      ...(checkIntervalMs !== null
        ? { check_interval_ms: Math.max(1_000, Math.round(checkIntervalMs / 1_000) * 1_000) }
        : {}),
      touched: listed,
      touched_count: state.count,
    };
    const said = JSON.stringify(payload);
    if (said === state.lastSent) return;
    state.lastSent = said;
    this.opts.emit(payload);
  }

  /** Takes a run out of its workspace watcher; the watcher closes with its last run. */
  private detach(state: RunState): void {
    const shared = this.byRoot.get(state.run.root);
    const k = feedKey(state.run.sessionId, state.run.changeId);
    if (!shared || shared.runs.get(k) !== state) return;
    shared.runs.delete(k);
    if (shared.runs.size === 0) {
      this.byRoot.delete(shared.root);
      shared.markSettled();
      shared.watcher.close();
    }
  }

  /** Stops following a run: its watch share, its periodic check and its pending event all end (resolves once a running check has). */
  async close(sessionId: string, changeId: string): Promise<void> {
    const k = feedKey(sessionId, changeId);
    const state = this.byRun.get(k);
    if (!state) return;
    this.byRun.delete(k);
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
    this.detach(state);
    // A check still running is waited for, so that whoever closes the engine next does not cut it off.
    await state.poller?.stop();
  }

  /** True while `state` is still the live state of its run (not closed). */
  private isCurrent(state: RunState): boolean {
    return this.byRun.get(feedKey(state.run.sessionId, state.run.changeId)) === state;
  }

  async closeAll(): Promise<void> {
    for (const state of [...this.byRun.values()]) await this.close(state.run.sessionId, state.run.changeId);
  }

  /**
   * Resolves once the watcher of a run's workspace reports every later file event: true when it is
   * ready, false when the run is not watched (not followed, checked periodically, or its watcher
   * closed first). Edits made before that moment reach the run through `changedSoFar`.
   */
  async ready(sessionId: string, changeId: string): Promise<boolean> {
    const state = this.byRun.get(feedKey(sessionId, changeId));
    if (!state || state.mode !== 'watch') return false;
    const shared = this.byRoot.get(state.run.root);
    if (!shared) return false;
    await shared.settled;
    return (
      shared.ready && this.byRoot.get(state.run.root) === shared && this.isCurrent(state) && state.mode === 'watch'
    );
  }

  /** How a run is followed now, or null when it is not. */
  mode(sessionId: string, changeId: string): LiveFeedMode | null {
    return this.byRun.get(feedKey(sessionId, changeId))?.mode ?? null;
  }

  /** The pause after a polled run's last check (ms), or null when the run is not polled. */
  checkIntervalMs(sessionId: string, changeId: string): number | null {
    const state = this.byRun.get(feedKey(sessionId, changeId));
    return state?.poller ? state.poller.intervalMs() : null;
  }

  /** Workspace watchers currently open (one per watched workspace). */
  watcherCount(): number {
    return this.byRoot.size;
  }

  handles(): FeedHandles {
    let throttleTimers = 0;
    for (const s of this.byRun.values()) if (s.timer) throttleTimers++;
    return {
      watchers: this.byRoot.size,
      folderWatches: this.budget.held(),
      pollers: this.pollingRuns(),
      throttleTimers,
      runs: this.byRun.size,
    };
  }

  /** Counters of the events handled, the watchers closed by storms and the periodic checks. */
  stats(): FeedStats {
    return { ...this.counts };
  }

  isOpen(sessionId: string, changeId: string): boolean {
    return this.byRun.has(feedKey(sessionId, changeId));
  }
}
