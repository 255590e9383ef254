import type { Limits, TruncatedReason } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { keyFromText, type PathKey } from '../paths/index.ts';
import { ownFilesUnder, pseudoMountsBelow, type Scanner } from '../workspace/index.ts';
import { captureCheckpoint } from './capture.ts';
import type { ConfigCache, IndexCache } from './git-oracle.ts';
import { captureByOracle, listedCount, OverScanLimitError } from './oracle-capture.ts';
import { logEngineFailure, logOracleFallback, type EngineLog } from './failure-log.ts';
import type { IgnoreCache } from './ignore-cache.ts';
import { sortReasons, type Checkpoint } from './model.ts';
import { span } from './trace.ts';
import type { StartInput, StartResult } from './types.ts';

/** What taking and completing a checkpoint share: limits, the scan pool, the ignore guesses, the log. */
export interface EngineContext {
  limits: Readonly<Limits>;
  scanner: Scanner;
  gitTimeoutMs: number;
  /** Deadline of git's listing of a git workspace (status, config): it grows with the repository. */
  listingTimeoutMs: number;
  ignoreCache: IgnoreCache;
  /** The last index listing per repository (git as the stat oracle). */
  indexCache: IndexCache;
  /** Each repository's config overrides while its config files stay the same. */
  configCache: ConfigCache;
  /** Never ask git for the listing (tests of the walk that plain folders and fallbacks use). */
  walkOnly?: boolean;
  /** The server's own files under a folder (never reported). */
  ownFiles(root: string): PathKey[];
  now(): number;
  log: EngineLog;
}

export function ownFilesFinder(dbPath: string | null): (root: string) => PathKey[] {
  return (root) => ownFilesUnder(root, dbPath).map(keyFromText);
}

/**
 * Takes a checkpoint and never throws: a capture that fails on an exception becomes an empty
 * checkpoint that says `degraded` (and the cause is logged). `reserveMemory` asks the shared
 * memory cap for snapshot room.
 */
export async function takeCheckpoint(
  input: StartInput,
  ctx: EngineContext,
  reserveMemory: (wanted: number) => number,
): Promise<Checkpoint> {
  const done = span();
  const at = { sessionId: input.sessionId, changeId: input.changeId, root: input.workspace.root };
  let cp: Checkpoint;
  try {
    const res =
      (await captureWithOracle(input, ctx, reserveMemory, at)) ??
      (await captureCheckpoint({
        root: input.workspace.root,
        kind: input.workspace.kind,
        rootGitDir: input.workspace.repo?.gitDir ?? null,
        ownFiles: ctx.ownFiles(input.workspace.root),
        limits: ctx.limits,
        scanner: ctx.scanner,
        gitTimeoutMs: ctx.gitTimeoutMs,
        guessIgnore: ctx.ignoreCache.get(input.workspace.root),
        reserveMemory,
        now: ctx.now,
        reportFailure: (what, err) => logEngineFailure(ctx.log, `checkpoint ${what}`, at, err),
      }));
    cp = res.checkpoint;
    if (cp.scanMode === 'git') ctx.ignoreCache.remember(cp.root, cp.ignore);
  } catch (err) {
    logEngineFailure(ctx.log, 'checkpoint', at, err);
    cp = failedCheckpoint(input, ctx.now, 'degraded');
  }
  done('checkpoint');
  return cp;
}

/**
 * git as the stat oracle, for a git workspace: null when it cannot be used here (no repository, a
 * kernel file system mounted below the root, a filter driver that cannot be switched off, git
 * failing or too slow), and the walk takes the checkpoint instead; the cause is logged.
 */
async function captureWithOracle(
  input: StartInput,
  ctx: EngineContext,
  reserveMemory: (wanted: number) => number,
  at: { sessionId: string; changeId: string; root: string },
): Promise<{ checkpoint: Checkpoint } | null> {
  const repo = input.workspace.repo;
  if (input.workspace.kind !== 'git' || !repo || ctx.walkOnly) return null;
  if (pseudoMountsBelow(input.workspace.root).length > 0) return null;
  try {
    return await captureByOracle({
      root: input.workspace.root,
      kind: input.workspace.kind,
      repo,
      ownFiles: ctx.ownFiles(input.workspace.root),
      limits: ctx.limits,
      scanner: ctx.scanner,
      gitTimeoutMs: ctx.listingTimeoutMs,
      indexCache: ctx.indexCache,
      configCache: ctx.configCache,
      reserveMemory,
      now: ctx.now,
      reportFailure: (what, err) => logEngineFailure(ctx.log, `checkpoint ${what}`, at, err),
    });
  } catch (err) {
    if (err instanceof AppError && err.code === 'git_timeout') {
      // git could not list this workspace in time; a walk would be slower still. The run is told
      // so at once (nothing is claimed about it) instead of waiting for a walk cut by its deadline.
      logOracleFallback(ctx.log, at, err, 'not walked: the checkpoint says git_timeout');
      return { checkpoint: failedCheckpoint(input, ctx.now, 'git_timeout') };
    }
    if (!(err instanceof OverScanLimitError)) logOracleFallback(ctx.log, at, err, 'walking instead');
    return null;
  }
}

/** The answer to a run's start. */
export function startSummary(cp: Checkpoint): StartResult {
  const reasons = sortReasons(cp.reasons);
  return {
    workspace_kind: cp.kind,
    scanned_files: cp.oracle ? listedCount(cp.oracle) : cp.files.paths.length,
    truncated: reasons.length > 0,
    truncated_reasons: reasons,
    duration_ms: Math.round(cp.durationMs),
  };
}

function failedCheckpoint(input: StartInput, now: () => number, reason: TruncatedReason): Checkpoint {
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
    oracle: null,
  };
}
