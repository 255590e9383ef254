import { performance } from 'node:perf_hooks';
import type { Limits, TruncatedReason } from '../../../shared/index.ts';
import type { IndexEntry } from '../../git/index.ts';
import { pseudoMountsBelow, ScanDeadlineError, type ScanTable, type Scanner } from '../../workspace/index.ts';
import { keyFromText, type PathKey } from '../../paths/index.ts';
import { readInside, safeRoot } from '../../fs/index.ts';
import { nestedArea } from '../common/nested-repo.ts';
import { addReason, reasonFor } from '../common/reasons.ts';
import type { Coverage, GitArea, IgnoreState } from '../model.ts';
import { listArea, listAreaIndex, listIgnoreState } from './git-listing.ts';
import { mark, traced } from '../common/trace.ts';

/**
 * One scan phase over a workspace: git's ignore listing (and, at a checkpoint, its index) for the
 * workspace and every nested repository met, then the stat walk of each, within one file limit
 * and one soft deadline. A git failure degrades the phase (reason `degraded` / `git_timeout`)
 * instead of failing it.
 */

export interface ScanPhaseInput {
  root: string;
  /** git = git decides ignores; filesystem = default rules + root .gitignore. */
  scanMode: 'git' | 'filesystem';
  /** Read index entries too (checkpoint). */
  withIndex: boolean;
  /** Ignore decisions to use when git cannot answer (completion after a good checkpoint). */
  fallbackIgnore: IgnoreState | null;
  /**
   * git mode: the ignore decisions git most likely gives now (the checkpoint's at completion, the
   * last listing of this folder at a checkpoint). The walk then runs while git lists, and is kept
   * only if git's answer agrees with every decision it made; otherwise it is walked again.
   */
  guessIgnore?: IgnoreState | null;
  /** Paths recorded even when git now ignores them (tracked from the checkpoint on). */
  keepFiles?: ReadonlyMap<PathKey, number>;
  /** Server database files under the root (never recorded). */
  ownFiles: PathKey[];
  limits: Pick<Limits, 'maxScannedFiles' | 'scanTimeoutMs'>;
  scanner: Scanner;
  gitTimeoutMs: number;
  /** Told of a walk that failed on an exception (answered `degraded`): the caller logs it with context. */
  reportFailure?: (what: string, err: unknown) => void;
  /** The enclosing repository's git dir (for the root area's racy check). */
  rootGitDir: string | null;
}

export interface AreaIndex {
  area: number;
  entries: IndexEntry[];
  indexMtimeMs: number | null;
}

export interface ScanPhase {
  table: ScanTable;
  areas: GitArea[];
  indexes: AreaIndex[];
  ignore: IgnoreState;
  coverage: Coverage;
  reasons: TruncatedReason[];
  /** File-system rules: the root `.gitignore` the walk applied (null: none, or git's rules). */
  gitignoreText: string | null;
  /** The phase fell back to file-system rules because git failed on the workspace itself. */
  gitFailed: boolean;
}

/** Larger root `.gitignore` files are not used (the rules are best effort outside git). */
const MAX_GITIGNORE_BYTES = 4 * 1024 * 1024;

/**
 * The root `.gitignore` as text, read like any workspace file: a symlink there is not followed (git
 * does not follow one either), a FIFO does not block the walk, a file outside the root is not read.
 */
function readRootGitignore(root: string): string | null {
  try {
    const got = readInside(safeRoot(root), '.gitignore', MAX_GITIGNORE_BYTES);
    return got.kind === 'file' ? got.bytes.toString('utf8') : null;
  } catch {
    return null; // the root itself vanished: the walk finds nothing either
  }
}

/** The walk that never came back (deadline missed or worker lost): no files, nothing listed or seen. */
function emptyTable(truncated: ScanTable['truncated']): ScanTable {
  return {
    paths: [],
    size: new Float64Array(0),
    mtimeMs: new Float64Array(0),
    ctimeMs: new Float64Array(0),
    ino: new Float64Array(0),
    mode: new Uint8Array(0),
    nestedRepos: [],
    prunedDirs: [],
    truncated,
    listedDirs: [],
    seenDirs: [],
    skippedFiles: [],
    durationMs: 0,
  };
}

function mergeTables(tables: ScanTable[]): ScanTable {
  if (tables.length === 1) return tables[0]!;
  const cat = <T extends Float64Array | Uint8Array>(pick: (t: ScanTable) => T, make: (n: number) => T): T => {
    const out = make(tables.reduce((n, t) => n + pick(t).length, 0));
    let pos = 0;
    for (const t of tables) {
      out.set(pick(t), pos);
      pos += pick(t).length;
    }
    return out;
  };
  const truncated = tables.find((t) => t.truncated !== null)?.truncated ?? null;
  return {
    paths: tables.flatMap((t) => t.paths),
    size: cat(
      (t) => t.size,
      (n) => new Float64Array(n),
    ),
    mtimeMs: cat(
      (t) => t.mtimeMs,
      (n) => new Float64Array(n),
    ),
    ctimeMs: cat(
      (t) => t.ctimeMs,
      (n) => new Float64Array(n),
    ),
    ino: cat(
      (t) => t.ino,
      (n) => new Float64Array(n),
    ),
    mode: cat(
      (t) => t.mode,
      (n) => new Uint8Array(n),
    ),
    nestedRepos: tables.flatMap((t) => t.nestedRepos),
    prunedDirs: tables.flatMap((t) => t.prunedDirs),
    truncated,
    listedDirs: tables.flatMap((t) => t.listedDirs),
    seenDirs: tables.flatMap((t) => t.seenDirs),
    skippedFiles: tables.flatMap((t) => t.skippedFiles),
    durationMs: tables.reduce((n, t) => n + t.durationMs, 0),
  };
}

const MAX_NESTED_DEPTH = 8;

/**
 * Whether a walk made with a guessed ignore state made the decision `fresh` gives for every folder
 * and file it met: then it is the walk `fresh` would have made (same folders entered, same files
 * recorded, in the same order, so even a cut walk is the same).
 */
export function walkAgrees(
  t: ScanTable,
  fresh: { pruneDirs: ReadonlySet<PathKey>; skipFiles: ReadonlySet<PathKey> },
): boolean {
  const pruned = new Set(t.prunedDirs);
  for (const d of t.prunedDirs) if (!fresh.pruneDirs.has(d)) return false;
  for (const d of t.seenDirs) if (!pruned.has(d) && fresh.pruneDirs.has(d)) return false;
  for (const f of t.skippedFiles) if (!fresh.skipFiles.has(f)) return false;
  for (const p of t.paths) if (fresh.skipFiles.has(p)) return false;
  return true;
}

export async function runScanPhase(input: ScanPhaseInput): Promise<ScanPhase> {
  const reasons: TruncatedReason[] = [];
  const areas: GitArea[] = [];
  const indexes: AreaIndex[] = [];
  const ignore: IgnoreState = { pruneDirs: [], skipFiles: [] };
  let scanMode = input.scanMode;
  let gitFailed = false;

  const addIgnore = (ig: IgnoreState) => {
    for (const d of ig.pruneDirs) ignore.pruneDirs.push(d);
    for (const f of ig.skipFiles) ignore.skipFiles.push(f);
  };
  const skipList = (ig: IgnoreState): PathKey[] => [
    ...(input.keepFiles ? ig.skipFiles.filter((p) => !input.keepFiles!.has(p)) : ig.skipFiles),
    ...input.ownFiles,
  ];

  // A kernel or device file system mounted inside the workspace is never walked.
  const pseudoMounts = pseudoMountsBelow(input.root).map(keyFromText);
  const pruneList = (ig: IgnoreState): PathKey[] =>
    pseudoMounts.length > 0 ? [...ig.pruneDirs, ...pseudoMounts] : ig.pruneDirs;

  const tables: ScanTable[] = [];
  let remaining = input.limits.maxScannedFiles;
  // The soft deadline bounds the walk (from its start); each git call has its own kill deadline.
  let deadline = Infinity;
  let walkFailed = false;
  // Read once: every walk of the phase (and the completion that compares with it) applies the same text.
  let rootGitignore: { text: string | null } | null = null;
  const gitignoreOf = () => (rootGitignore ??= { text: readRootGitignore(input.root) }).text;
  const walk = (starts: PathKey[], ig: IgnoreState): Promise<ScanTable> => {
    if (deadline === Infinity) deadline = performance.now() + input.limits.scanTimeoutMs;
    const asked = traced(
      `walk${starts.length === 1 && starts[0] === '' ? '' : ' nested'}`,
      input.scanner.scan({
        root: input.root,
        starts,
        pruneDirs: pruneList(ig),
        skipFiles: skipList(ig),
        mode: scanMode,
        gitignoreText: scanMode === 'filesystem' ? gitignoreOf() : null,
        maxFiles: remaining,
        timeoutMs: Math.max(0, deadline - performance.now()),
      }),
    );
    // A walk that misses its hard deadline (its worker was terminated) is a scan cut at time zero;
    // a lost worker degrades the phase. Either way nothing it would have seen is claimed.
    return asked.catch((err: unknown) => {
      walkFailed = true;
      if (err instanceof ScanDeadlineError) return emptyTable('scan_time');
      input.reportFailure?.('walk', err);
      addReason(reasons, 'degraded');
      return emptyTable(null);
    });
  };
  const accept = (t: ScanTable): ScanTable => {
    tables.push(t);
    remaining -= t.paths.length;
    if (t.truncated) addReason(reasons, t.truncated);
    return t;
  };

  // The root's index is listed and parsed (main thread) while the walk runs (worker): only the
  // ignore listing must come before the walk, and not even that when there is a good guess of it.
  let rootIndex: Promise<{ entries: IndexEntry[]; indexMtimeMs: number | null } | Error> | null = null;
  let guessed: Promise<ScanTable> | null = null;
  if (scanMode === 'git') {
    const area: GitArea = { prefix: '', cwd: input.root };
    if (input.withIndex)
      rootIndex = traced('index listing', listAreaIndex(area, input.rootGitDir, input.gitTimeoutMs)).catch(
        (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
      );
    const guess = input.guessIgnore ?? null;
    if (guess) guessed = walk([''], guess);
    try {
      addIgnore(await traced('ignore listing', listIgnoreState(area, input.gitTimeoutMs)));
      areas.push(area);
    } catch (err) {
      addReason(reasons, reasonFor(err));
      if (input.fallbackIgnore) {
        // Completion after a good checkpoint: keep the checkpoint's ignore decisions.
        areas.push(area);
        addIgnore(input.fallbackIgnore);
      } else {
        scanMode = 'filesystem';
        gitFailed = true;
      }
    }
  }

  let table: ScanTable | null = null;
  if (guessed) {
    const t = await guessed;
    const agrees =
      scanMode === 'git' &&
      walkAgrees(t, { pruneDirs: new Set(pruneList(ignore)), skipFiles: new Set(skipList(ignore)) });
    mark(agrees ? 'guessed walk kept' : 'guessed walk dropped');
    if (agrees) table = accept(t);
    else deadline = Infinity; // walked again with git's answer: its own deadline, as if unguessed
  }
  table ??= accept(await walk([''], ignore));
  // Nested repositories and submodules: their own index and ignore rules, files reported as files (B16).
  let pending = table.truncated || walkFailed ? [] : table.nestedRepos;
  const unlisted: PathKey[] = table.truncated ? [...table.nestedRepos] : [];
  for (let depth = 0; pending.length > 0 && depth < MAX_NESTED_DEPTH; depth++) {
    const starts: PathKey[] = [];
    for (const rel of pending) {
      try {
        const found = await nestedArea(input.root, rel, input.gitTimeoutMs);
        if (found) {
          const idx = areas.length;
          const listing = await listArea(found.area, found.gitDir, input.gitTimeoutMs, input.withIndex);
          areas.push(found.area);
          indexes.push({ area: idx, entries: listing.entries, indexMtimeMs: listing.indexMtimeMs });
          addIgnore(listing.ignore);
        }
      } catch (err) {
        // Still scanned (changes inside are never lost), with the checkpoint's ignore decisions when known.
        addReason(reasons, reasonFor(err));
        if (input.fallbackIgnore) {
          const under = rel + '/';
          addIgnore({
            pruneDirs: input.fallbackIgnore.pruneDirs.filter((d) => d.startsWith(under)),
            skipFiles: input.fallbackIgnore.skipFiles.filter((f) => f.startsWith(under)),
          });
        }
      }
      starts.push(rel);
    }
    if (remaining <= 0 || performance.now() > deadline) {
      // Limits already spent: these folders stay unscanned (and uncovered).
      unlisted.push(...starts);
      addReason(reasons, remaining <= 0 ? 'scan_files' : 'scan_time');
      break;
    }
    table = accept(await walk(starts, ignore));
    pending = table.truncated ? [] : table.nestedRepos;
    if (table.truncated) unlisted.push(...table.nestedRepos);
  }

  if (rootIndex && !gitFailed) {
    const got = await rootIndex;
    if (got instanceof Error)
      addReason(reasons, reasonFor(got)); // no clean files: everything is read instead
    else indexes.unshift({ area: 0, entries: got.entries, indexMtimeMs: got.indexMtimeMs });
  } else if (rootIndex) {
    await rootIndex;
  }
  const merged = mergeTables(tables);
  const complete =
    !walkFailed &&
    merged.truncated === null &&
    unlisted.length === 0 &&
    !reasons.includes('scan_files') &&
    !reasons.includes('scan_time');
  const coverage: Coverage = {
    complete,
    listed: new Set(complete ? [] : merged.listedDirs),
    seen: new Set(complete ? [] : merged.seenDirs),
    pruned: new Set(merged.prunedDirs),
  };
  const gitignoreText = scanMode === 'filesystem' ? gitignoreOf() : null;
  return { table: merged, areas, indexes, ignore, coverage, reasons, gitignoreText, gitFailed };
}
