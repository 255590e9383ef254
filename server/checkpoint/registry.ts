import { TRUNCATED_REASONS, type TruncatedReason } from '../../shared/index.ts';
import { computeDelta } from '../delta/index.ts';
import { createGitDiffEngine } from '../git/index.ts';
import { createScanner, isInside, ownFilesUnder, type Scanner, type ScannerOptions } from '../workspace/index.ts';
import { keyFromText } from '../paths/index.ts';
import { captureCheckpoint } from './capture.ts';
import { collectChanges } from './changes.ts';
import type { Checkpoint, IgnoreState } from './model.ts';
import { span } from './trace.ts';
import type { CheckpointEngine, DeltaResult, RegistryOptions, StartInput, StartResult } from './types.ts';

/**
 * The registry of live checkpoints (B6, B19, B20): keyed by session + change id, dropped on
 * completion or after the TTL since their run's last event, all sharing one content-memory cap
 * (the oldest idle checkpoints are evicted to make room), and flagged `overlapping` when runs of
 * different ids are live at once on the same or nested folders.
 */

interface Entry {
  sessionId: string;
  changeId: string;
  runKey: string;
  root: string;
  started: Promise<StartResult>;
  checkpoint: Checkpoint | null;
  lastEventAt: number;
  overlapping: boolean;
  /**
   * Computations in flight. A busy checkpoint is never evicted for memory; the TTL sweep spares
   * only one whose completion is in flight (a progress peek holds its own reference, so expiry
   * need not wait for it).
   */
  busy: number;
  completing: Promise<DeltaResult | null> | null;
  memoryBytes: number;
}

/** Workspace folders whose last ignore listing is kept, and the largest listing kept. */
const MAX_REMEMBERED_FOLDERS = 64;
const MAX_REMEMBERED_IGNORES = 50_000;

const keyOf = (sessionId: string, changeId: string): string => `${sessionId}\0${changeId}`;

export interface EngineInternals {
  /** Run scans in this thread instead of the worker (tests of the fallback). */
  inThread?: boolean;
  /** Scan worker pool settings (deadlines, worker module, log). */
  scanner?: ScannerOptions;
}

export function createEngine(opts: RegistryOptions & EngineInternals): CheckpointEngine {
  const limits = opts.limits;
  const now = opts.now ?? Date.now;
  const gitTimeoutMs = Math.max(2_000, 5 * limits.scanTimeoutMs);
  const scanner: Scanner = createScanner({ ...opts.scanner, inThread: opts.inThread === true });
  const diffEngine = createGitDiffEngine();
  const entries = new Map<string, Entry>();
  let reservedBytes = 0;

  // The last git ignore listing per workspace folder: the next scan walks with it while git lists
  // again, and keeps its walk only if git's new answer agrees (workspace-scan.ts). A few folders,
  // small listings only: this is a guess, never a source of truth.
  const lastIgnore = new Map<string, IgnoreState>();
  const rememberIgnore = (root: string, ig: IgnoreState | null) => {
    lastIgnore.delete(root);
    if (!ig || ig.pruneDirs.length + ig.skipFiles.length > MAX_REMEMBERED_IGNORES) return;
    lastIgnore.set(root, ig);
    if (lastIgnore.size > MAX_REMEMBERED_FOLDERS) lastIgnore.delete(lastIgnore.keys().next().value!);
  };

  const usedBytes = (): number => {
    let n = reservedBytes;
    for (const e of entries.values()) n += e.memoryBytes;
    return n;
  };

  const remove = (key: string) => {
    entries.delete(key);
  };

  /** Frees room for `wanted` bytes by evicting the oldest idle checkpoints, then grants what fits. */
  const reserveMemory = (self: Entry, wanted: number): number => {
    const cap = limits.maxCheckpointMemoryBytes;
    if (usedBytes() + wanted > cap) {
      const idle = [...entries.entries()]
        .filter(([, e]) => e !== self && e.busy === 0 && e.checkpoint !== null && e.memoryBytes > 0)
        .sort((a, b) => a[1].lastEventAt - b[1].lastEventAt);
      for (const [key] of idle) {
        if (usedBytes() + wanted <= cap) break;
        remove(key);
      }
    }
    const grant = Math.max(0, Math.min(wanted, cap - usedBytes()));
    reservedBytes += grant;
    return grant;
  };

  const ownFilesFor = (root: string) => ownFilesUnder(root, opts.dbPath).map(keyFromText);

  const failedCheckpoint = (input: StartInput, reason: TruncatedReason): Checkpoint => ({
    root: input.workspace.root,
    kind: input.workspace.kind,
    scanMode: 'filesystem',
    scanStartedAtMs: Date.now(),
    startedAt: now(),
    files: {
      paths: [],
      size: new Float64Array(0),
      mtimeMs: new Float64Array(0),
      ctimeMs: new Float64Array(0),
      ino: new Float64Array(0),
      mode: new Uint8Array(0),
      origin: new Uint8Array(0),
      lack: new Uint8Array(0),
      area: new Uint8Array(0),
      oids: new Uint8Array(0),
      snapOffset: new Int32Array(0),
      snapLength: new Int32Array(0),
      binary: new Uint8Array(0),
      racy: new Uint8Array(0),
    },
    block: Buffer.alloc(0),
    areas: [],
    // Covers nothing: a checkpoint that could not be taken never claims files were added or deleted.
    coverage: { complete: false, listed: new Set(), seen: new Set(), pruned: new Set() },
    ignore: { pruneDirs: [], skipFiles: [] },
    reasons: [reason],
    memoryBytes: 0,
    durationMs: 0,
  });

  const sortReasons = (list: TruncatedReason[]): TruncatedReason[] => TRUNCATED_REASONS.filter((r) => list.includes(r));

  const start = (input: StartInput): Promise<StartResult> => {
    const key = keyOf(input.sessionId, input.changeId);
    const existing = entries.get(key);
    if (existing) return existing.started;
    const runKey = `${input.sessionId}\0${input.runId}`;
    const entry: Entry = {
      sessionId: input.sessionId,
      changeId: input.changeId,
      runKey,
      root: input.workspace.root,
      started: Promise.resolve(null as unknown as StartResult),
      checkpoint: null,
      lastEventAt: now(),
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
      let cp: Checkpoint;
      const done = span();
      try {
        const res = await captureCheckpoint({
          root: input.workspace.root,
          kind: input.workspace.kind,
          rootGitDir: input.workspace.repo?.gitDir ?? null,
          ownFiles: ownFilesFor(input.workspace.root),
          limits,
          scanner,
          gitTimeoutMs,
          guessIgnore: lastIgnore.get(input.workspace.root) ?? null,
          reserveMemory: (wanted) => (granted = reserveMemory(entry, wanted)),
          now,
        });
        cp = res.checkpoint;
        if (cp.scanMode === 'git') rememberIgnore(cp.root, cp.ignore);
      } catch {
        cp = failedCheckpoint(input, 'degraded');
      }
      done('checkpoint');
      reservedBytes -= granted;
      entry.checkpoint = cp;
      entry.memoryBytes = entries.get(key) === entry ? cp.memoryBytes : 0;
      const reasons = sortReasons(cp.reasons);
      return {
        workspace_kind: cp.kind,
        scanned_files: cp.files.paths.length,
        truncated: reasons.length > 0,
        truncated_reasons: reasons,
        duration_ms: Math.round(cp.durationMs),
      };
    })();
    return entry.started;
  };

  const compute = async (entry: Entry): Promise<DeltaResult> => {
    await entry.started;
    const cp = entry.checkpoint!;
    let reasons: TruncatedReason[];
    let result: Awaited<ReturnType<typeof computeDelta>>;
    const step = span();
    try {
      const collected = await collectChanges(cp, {
        limits,
        scanner,
        gitTimeoutMs,
        ownFiles: ownFilesFor(cp.root),
        rootGitDir: null,
      });
      reasons = collected.reasons;
      if (cp.scanMode === 'git') rememberIgnore(cp.root, collected.ignore);
      step('changes');
      result = await computeDelta({
        changes: collected.changes,
        limits,
        batchDiff: diffEngine.batchDiff,
        renameDetector: diffEngine.renameDetector,
        fallbackDiff: diffEngine.fallbackDiff,
      });
    } catch {
      // Never an exception out of completion, and never a silent "no changes": say it degraded.
      reasons = ['degraded'];
      result = await computeDelta({ changes: [], limits });
    }
    step('completion');
    const all = sortReasons([...reasons, ...result.truncated_reasons]);
    return {
      workspace: cp.root,
      workspace_kind: cp.kind,
      started_at: cp.startedAt,
      finished_at: now(),
      changed_count: result.changed_count,
      added_count: result.added_count,
      modified_count: result.modified_count,
      deleted_count: result.deleted_count,
      renamed_count: result.renamed_count,
      binary_count: result.binary_count,
      truncated: all.length > 0,
      truncated_reasons: all,
      total_patch_bytes: result.total_patch_bytes,
      overlapping: entry.overlapping,
      omitted_count: result.omitted_count,
      files: result.files,
    };
  };

  const withBusy = async (entry: Entry): Promise<DeltaResult> => {
    entry.busy++;
    try {
      return await compute(entry);
    } finally {
      entry.busy--;
    }
  };

  const sweep = () => {
    const dropped: { sessionId: string; changeId: string }[] = [];
    const t = now();
    for (const [key, e] of entries) {
      const completingNow = e.completing !== null && e.busy > 0;
      if (!completingNow && e.checkpoint !== null && t - e.lastEventAt >= limits.checkpointTtlMs) {
        remove(key);
        dropped.push({ sessionId: e.sessionId, changeId: e.changeId });
      }
    }
    return dropped;
  };
  const timer = setInterval(sweep, Math.min(60_000, Math.max(1_000, Math.floor(limits.checkpointTtlMs / 10))));
  timer.unref();

  /** The final delta of a checkpoint, computed once; the entry stays until dropped. */
  const completeKept = (sessionId: string, changeId: string): Promise<DeltaResult | null> => {
    const entry = entries.get(keyOf(sessionId, changeId));
    if (!entry) return Promise.resolve(null);
    entry.completing ??= withBusy(entry);
    return entry.completing;
  };

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
      const runKey = `${sessionId}\0${runId}`;
      const t = now();
      for (const e of entries.values()) if (e.runKey === runKey) e.lastEventAt = t;
    },
    drop: (sessionId, changeId) => {
      remove(keyOf(sessionId, changeId));
    },
    sweep,
    memoryBytes: () => {
      let n = 0;
      for (const e of entries.values()) n += e.memoryBytes;
      return n;
    },
    stuckWorkers: () => scanner.stuck(),
    close: async () => {
      clearInterval(timer);
      entries.clear();
      lastIgnore.clear();
      await scanner.close();
    },
  };
}
