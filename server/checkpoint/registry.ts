import type { Limits } from '../../shared/index.ts';
import { createGitDiffEngine } from '../git/index.ts';
import { createScanner, isInside, type ScannerOptions } from '../workspace/index.ts';
import { assembleDelta } from './assemble-delta.ts';
import { keyOf, runKeyOf, type Entry } from './entry.ts';
import { stderrLog } from './failure-log.ts';
import { createMemoryBudget } from './memory.ts';
import { STRATEGIES } from './strategies.ts';
import type { CheckpointWatchOptions, StrategyDeps, Taken } from './strategy.ts';
import { ownFilesFinder, startSummary, takeCheckpoint, type EngineContext } from './take-checkpoint.ts';
import { sweepExpired } from './ttl.ts';
import type { CheckpointEngine, DeltaResult, RegistryOptions, StartInput, StartResult } from './types.ts';
import { createWatches } from './watch/index.ts';

/**
 * The registry of live checkpoints (B6, B19, B20): keyed by session + change id, dropped on
 * completion or after the TTL since their run's last event, all sharing one content-memory cap
 * (the oldest idle checkpoints are evicted to make room), and flagged `overlapping` when runs of
 * different ids are live at once on the same or nested folders.
 */

export interface EngineInternals {
  /** Run scans in this thread instead of the worker (tests of the fallback). */
  inThread?: boolean;
  /** Scan worker pool settings (deadlines, worker module, log). */
  scanner?: ScannerOptions;
  /** Only the walk, for git workspaces too, instead of asking git status (tests of the walk). */
  walkOnly?: boolean;
  /** git's listing deadline (tests of the bound; default from the limits). */
  listingTimeoutMs?: number;
  /** The checkpoint watchers' bounds (tests pass tiny ones) and a listener told how each listing was made. */
  watch?: Partial<CheckpointWatchOptions>;
}

/** The checkpoint watchers' default bounds (docs/performance.md). */
export const CHECKPOINT_WATCH_DEFAULTS: Readonly<CheckpointWatchOptions> = Object.freeze({
  // A quarter of the system's inotify watches at most (the live feed takes another quarter).
  maxWatches: 50_000,
  // A workspace no checkpoint came to for this long is not watched any more.
  idleMs: 10 * 60_000,
  // The sync cookie's event comes back within a few ms; past this the watcher is not trusted.
  cookieWaitMs: 2_000,
  // Past this many changed paths one whole git status is cheaper than naming them.
  maxPaths: 2_000,
});

/**
 * git lists 500,000 files in 3-4 s on a loaded 2-core machine: its deadline is ten scan periods,
 * at least 10 s. Over it, the checkpoint says `git_timeout` at once.
 */
export function listingTimeoutMs(limits: Readonly<Limits>): number {
  return Math.max(10_000, 10 * limits.scanTimeoutMs);
}

export function createEngine(opts: RegistryOptions & EngineInternals): CheckpointEngine {
  const limits = opts.limits;
  const watch: CheckpointWatchOptions | null =
    opts.watchCheckpoints === true
      ? { ...CHECKPOINT_WATCH_DEFAULTS, ...(opts.log ? { log: opts.log } : {}), ...opts.watch }
      : null;
  const deps: StrategyDeps = {
    limits,
    now: opts.now ?? Date.now,
    gitTimeoutMs: Math.max(2_000, 5 * limits.scanTimeoutMs),
    listingTimeoutMs: opts.listingTimeoutMs ?? listingTimeoutMs(limits),
    scanner: createScanner({ ...opts.scanner, inThread: opts.inThread === true }),
    watch,
    watches: watch ? createWatches(watch) : null,
  };
  // The last strategy (the walk) takes any workspace: alone, it walks git workspaces too.
  const factories = opts.walkOnly === true ? STRATEGIES.slice(-1) : STRATEGIES;
  const ctx: EngineContext = {
    limits,
    now: deps.now,
    scanner: deps.scanner,
    strategies: factories.map((create) => create(deps)),
    ownFiles: ownFilesFinder(opts.dbPath),
    log: opts.log ?? stderrLog,
  };
  const diffEngine = createGitDiffEngine();
  const entries = new Map<string, Entry>();
  const remove = (key: string) => {
    entries.delete(key);
  };
  const memory = createMemoryBudget(limits.maxCheckpointMemoryBytes, entries, remove);

  const start = (input: StartInput): Promise<StartResult> => {
    const key = keyOf(input.sessionId, input.changeId);
    const existing = entries.get(key);
    if (existing) return existing.started;
    const runKey = runKeyOf(input.sessionId, input.runId);
    const entry: Entry = {
      sessionId: input.sessionId,
      changeId: input.changeId,
      runKey,
      root: input.workspace.root,
      started: Promise.resolve(null as unknown as StartResult),
      taken: null,
      lastEventAt: ctx.now(),
      overlapping: false,
      busy: 0,
      completing: null,
      memoryBytes: 0,
    };
    // B6: another run live on the same or a nested folder overlaps this one, and this one it.
    for (const other of entries.values()) {
      // A checkpoint kept only until its computed result is stored no longer sees new edits.
      if (other.runKey === runKey || other.completing !== null) continue;
      if (isInside(other.root, entry.root) || isInside(entry.root, other.root)) {
        other.overlapping = true;
        entry.overlapping = true;
      }
    }
    entries.set(key, entry);
    entry.started = (async (): Promise<StartResult> => {
      let granted = 0;
      // The newest first: the checkpoint most like this one.
      const held = (): Taken[] => {
        const out: Taken[] = [];
        for (const e of entries.values()) if (e !== entry && e.root === entry.root && e.taken) out.unshift(e.taken);
        return out;
      };
      const taken = await takeCheckpoint(input, ctx, (wanted) => (granted += memory.reserve(entry, wanted)), held);
      memory.release(granted);
      entry.taken = taken;
      // Evicted or dropped while it was being taken: it holds nothing against the cap.
      entry.memoryBytes = entries.get(key) === entry ? taken.checkpoint.memoryBytes : 0;
      return startSummary(taken);
    })();
    return entry.started;
  };

  const withBusy = async (entry: Entry): Promise<DeltaResult> => {
    entry.busy++;
    try {
      return await assembleDelta(entry, ctx, diffEngine);
    } finally {
      entry.busy--;
    }
  };

  /** The final delta of a checkpoint, computed once; the entry stays until dropped. */
  const completeKept = (sessionId: string, changeId: string): Promise<DeltaResult | null> => {
    const entry = entries.get(keyOf(sessionId, changeId));
    if (!entry) return Promise.resolve(null);
    entry.completing ??= withBusy(entry);
    return entry.completing;
  };

  // No timer here: the server runs the sweep as one of its background jobs.
  const sweep = () => sweepExpired(entries, ctx.now(), limits.checkpointTtlMs, remove);

  return {
    start,
    complete: (sessionId, changeId) => {
      const key = keyOf(sessionId, changeId);
      const entry = entries.get(key);
      if (!entry) return Promise.resolve(null);
      return completeKept(sessionId, changeId).finally(() => {
        if (entries.get(key) === entry) remove(key);
      });
    },
    completeKept,
    peek: async (sessionId, changeId) => {
      const entry = entries.get(keyOf(sessionId, changeId));
      if (!entry) return null;
      return withBusy(entry);
    },
    has: (sessionId, changeId) => entries.has(keyOf(sessionId, changeId)),
    touch: (sessionId, runId) => {
      const runKey = runKeyOf(sessionId, runId);
      const t = ctx.now();
      for (const e of entries.values()) if (e.runKey === runKey) e.lastEventAt = t;
    },
    drop: (sessionId, changeId) => {
      remove(keyOf(sessionId, changeId));
    },
    sweep,
    memoryBytes: () => memory.heldBytes(),
    stuckWorkers: () => ctx.scanner.stuck(),
    close: async () => {
      entries.clear();
      for (const s of ctx.strategies) s.clear();
      deps.watches?.close();
      await ctx.scanner.close();
    },
  };
}
