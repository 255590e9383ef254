import type { Limits, TruncatedReason } from '../../shared/index.ts';
import { keyFromText, type PathKey } from '../paths/index.ts';
import { ownFilesUnder, type Scanner } from '../workspace/index.ts';
import { sortReasons } from './common/reasons.ts';
import { span } from './common/trace.ts';
import { logEngineFailure, logStrategyFallback, type EngineLog } from './failure-log.ts';
import type { Checkpoint } from './model.ts';
import type { CaptureRequest, CheckpointStrategy, Taken } from './strategy.ts';
import type { StartInput, StartResult } from './types.ts';

/** What taking and completing a checkpoint share: limits, the strategies, the scan pool, the log. */
export interface EngineContext {
  limits: Readonly<Limits>;
  /** The strategies in the order a workspace is offered to them; the last takes any (strategies.ts). */
  strategies: readonly CheckpointStrategy[];
  scanner: Scanner;
  /** The server's own files under a folder (never reported). */
  ownFiles(root: string): PathKey[];
  now(): number;
  log: EngineLog;
}

export function ownFilesFinder(dbPath: string | null): (root: string) => PathKey[] {
  return (root) => ownFilesUnder(root, dbPath).map(keyFromText);
}

/**
 * Takes a checkpoint and never throws: the first strategy that takes the workspace records it. A
 * capture that fails on an exception becomes an empty checkpoint that says `degraded` (and the
 * cause is logged); one a strategy declares failed says its reason. Either is completed by the last
 * strategy, which claims nothing about it. `reserveMemory` asks the shared memory cap for snapshot
 * room (each grant adds to the capture's); `held` names the other checkpoints of the folder.
 */
export async function takeCheckpoint(
  input: StartInput,
  ctx: EngineContext,
  reserveMemory: (wanted: number) => number,
  held: () => readonly Taken[] = () => [],
): Promise<Taken> {
  const done = span();
  const at = { sessionId: input.sessionId, changeId: input.changeId, root: input.workspace.root };
  let taken: Taken;
  try {
    taken = await firstTaker(input, ctx, reserveMemory, held, at);
  } catch (err) {
    logEngineFailure(ctx.log, 'checkpoint', at, err);
    taken = notTaken(input, ctx, 'degraded');
  }
  done('checkpoint');
  return taken;
}

async function firstTaker(
  input: StartInput,
  ctx: EngineContext,
  reserveMemory: (wanted: number) => number,
  held: () => readonly Taken[],
  at: { sessionId: string; changeId: string; root: string },
): Promise<Taken> {
  const req: CaptureRequest = {
    root: input.workspace.root,
    kind: input.workspace.kind,
    repo: input.workspace.repo ?? null,
    ownFiles: ctx.ownFiles(input.workspace.root),
    reserveMemory,
    reportFailure: (what, err) => logEngineFailure(ctx.log, `checkpoint ${what}`, at, err),
    reportFallback: (what, err, outcome) => logStrategyFallback(ctx.log, at, what, err, outcome),
    held,
  };
  for (const strategy of ctx.strategies) {
    const got = await strategy.capture(req);
    if ('taken' in got) return { checkpoint: got.taken, strategy };
    if ('failed' in got) return notTaken(input, ctx, got.failed);
  }
  throw new Error('no checkpoint strategy took the workspace');
}

/** The answer to a run's start. */
export function startSummary({ checkpoint: cp, strategy }: Taken): StartResult {
  const reasons = sortReasons(cp.reasons);
  return {
    workspace_kind: cp.kind,
    scanned_files: strategy.scannedFiles(cp),
    truncated: reasons.length > 0,
    truncated_reasons: reasons,
    duration_ms: Math.round(cp.durationMs),
  };
}

/** A checkpoint that could not be taken, kept with the last strategy (the walk), which completes it. */
function notTaken(input: StartInput, ctx: EngineContext, reason: TruncatedReason): Taken {
  return { checkpoint: failedCheckpoint(input, ctx.now, reason), strategy: ctx.strategies[ctx.strategies.length - 1]! };
}

/** Empty, covering nothing, saying why. */
function failedCheckpoint(input: StartInput, now: () => number, reason: TruncatedReason): Checkpoint<null> {
  return {
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
    state: null,
  };
}
