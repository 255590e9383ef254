import type { Limits, WorkspaceKind } from '../../shared/index.ts';
import type { IndexEntry } from '../git/index.ts';
import { MODE_LINK, modeText, ScanDeadlineError, type ReadResult, type Scanner } from '../workspace/index.ts';
import type { PathKey } from '../paths/index.ts';
import {
  HASH_READ_BUDGET_BYTES,
  LACK_MEMORY_CAP,
  LACK_TOO_LARGE,
  LACK_UNREADABLE,
  ORIGIN_BLOB,
  ORIGIN_HASH,
  ORIGIN_NONE,
  ORIGIN_SNAPSHOT,
  RACY_MARGIN_MS,
  addReason,
  type Checkpoint,
  type FileTable,
  type IgnoreState,
} from './model.ts';
import { span, traced } from './trace.ts';
import { runScanPhase, type AreaIndex } from './workspace-scan.ts';

/**
 * Takes a checkpoint. In a git workspace a tracked file whose lstat matches its index entry (and is
 * not racy by git's rule) is clean: its start content is its blob, recorded by id only. Every other
 * file (dirty, untracked, conflicted, or any file outside git) is read once: text within the
 * snapshot cap and the memory grant is kept, the rest keeps its blob id (sha1) only.
 */

export interface CaptureInput {
  root: string;
  kind: WorkspaceKind;
  rootGitDir: string | null;
  ownFiles: PathKey[];
  limits: Readonly<Limits>;
  scanner: Scanner;
  gitTimeoutMs: number;
  /** The last ignore listing of this folder, if any: the walk need not wait for git's (verified after). */
  guessIgnore: IgnoreState | null;
  /** Asks the registry for up to `wanted` bytes of snapshot memory; returns the grant. */
  reserveMemory(wanted: number): number;
  now(): number;
  /** Told of a walk or read that failed on an exception (answered `degraded`): the caller logs it with context. */
  reportFailure?: (what: string, err: unknown) => void;
}

const HEX40 = /^[0-9a-f]{40}$/;

/** The same float Node computes for `Stats.mtimeMs`, from git's seconds + nanoseconds. */
function indexMtimeMs(e: IndexEntry): number {
  return Math.floor(e.mtimeMs / 1000) * 1000 + e.mtimeNs / 1e6;
}

interface IndexHit {
  entry: IndexEntry;
  area: number;
  indexMtimeMs: number | null;
}

function indexByPath(indexes: AreaIndex[]): { hits: Map<PathKey, IndexHit>; conflicted: Set<PathKey> } {
  const hits = new Map<PathKey, IndexHit>();
  const conflicted = new Set<PathKey>();
  for (const ix of indexes) {
    for (const e of ix.entries) {
      if (e.stage !== 0) conflicted.add(e.path);
      else if (e.mode !== '160000') hits.set(e.path, { entry: e, area: ix.area, indexMtimeMs: ix.indexMtimeMs });
    }
  }
  return { hits, conflicted };
}

export async function captureCheckpoint(
  input: CaptureInput,
): Promise<{ checkpoint: Checkpoint; grantedBytes: number }> {
  const startedAt = input.now();
  const scanStartedAtMs = Date.now();
  const t0 = performance.now();
  const phase = await runScanPhase({
    root: input.root,
    scanMode: input.kind === 'git' ? 'git' : 'filesystem',
    withIndex: true,
    fallbackIgnore: null,
    guessIgnore: input.guessIgnore,
    ownFiles: input.ownFiles,
    limits: input.limits,
    scanner: input.scanner,
    gitTimeoutMs: input.gitTimeoutMs,
    rootGitDir: input.rootGitDir,
    ...(input.reportFailure ? { reportFailure: input.reportFailure } : {}),
  });
  const classified = span();
  const t = phase.table;
  const n = t.paths.length;
  const files: FileTable = {
    paths: t.paths,
    size: t.size,
    mtimeMs: t.mtimeMs,
    ctimeMs: t.ctimeMs,
    ino: t.ino,
    mode: t.mode,
    origin: new Uint8Array(n),
    lack: new Uint8Array(n),
    area: new Uint8Array(n),
    oids: new Uint8Array(n * 20),
    snapOffset: new Int32Array(n).fill(-1),
    snapLength: new Int32Array(n),
    binary: new Uint8Array(n),
    racy: new Uint8Array(n),
  };
  const racyFrom = scanStartedAtMs - RACY_MARGIN_MS;
  const oidBytes = Buffer.from(files.oids.buffer, files.oids.byteOffset, files.oids.byteLength);
  const { hits, conflicted } = indexByPath(phase.indexes);
  const toRead: number[] = [];
  let wanted = 0;
  for (let i = 0; i < n; i++) {
    const p = t.paths[i]!;
    if (Math.max(t.mtimeMs[i]!, t.ctimeMs[i]!) >= racyFrom) files.racy[i] = 1;
    const hit = conflicted.has(p) ? undefined : hits.get(p);
    if (hit) {
      const e = hit.entry;
      const m = indexMtimeMs(e);
      const clean =
        e.mode === modeText(t.mode[i]!) &&
        e.size === t.size[i] &&
        m === t.mtimeMs[i] &&
        (e.ino === 0 || e.ino === t.ino[i]) &&
        hit.indexMtimeMs !== null &&
        m < hit.indexMtimeMs;
      if (clean && HEX40.test(e.oid)) {
        files.origin[i] = ORIGIN_BLOB;
        files.area[i] = hit.area;
        oidBytes.write(e.oid, i * 20, 'hex');
        continue;
      }
    }
    toRead.push(i);
    if (t.size[i]! <= input.limits.maxSnapshotBytes) wanted += t.size[i]!;
  }

  classified('classify');
  const granted = toRead.length > 0 ? input.reserveMemory(wanted) : 0;
  let block: Buffer = Buffer.alloc(0);
  let memoryCapHit = false;
  let readFailure: 'scan_time' | 'degraded' | null = null;
  if (toRead.length > 0) {
    const links = new Uint8Array(toRead.length);
    toRead.forEach((fi, j) => (links[j] = t.mode[fi] === MODE_LINK ? 1 : 0));
    let got: ReadResult | null = null;
    try {
      got = await traced(
        `read ${toRead.length}`,
        input.scanner.read({
          root: input.root,
          paths: toRead.map((fi) => t.paths[fi]!),
          links,
          sizes: Float64Array.from(toRead.map((fi) => t.size[fi]!)),
          keepMaxBytes: input.limits.maxSnapshotBytes,
          keepBudgetBytes: granted,
          keepBinary: false,
          hashBudgetBytes: HASH_READ_BUDGET_BYTES,
          hashKept: false,
        }),
      );
    } catch (err) {
      // The read missed its deadline or lost its worker: these files keep no start content (a
      // changed stat is then reported without a before side), and the checkpoint says why.
      readFailure = err instanceof ScanDeadlineError ? 'scan_time' : 'degraded';
      if (readFailure === 'degraded') input.reportFailure?.('read', err);
    }
    if (got !== null) {
      const r = got;
      block = Buffer.from(r.block.buffer, r.block.byteOffset, r.block.byteLength);
      memoryCapHit = r.skippedForBudget > 0 || r.skippedForHashBudget > 0;
      toRead.forEach((fi, j) => {
        if (r.unreadable[j]) {
          // There but not readable: its scanned stat stays, so an unreadable file nobody touched is
          // no change at completion, and one that changed is reported as unreadable, never deleted.
          files.origin[fi] = ORIGIN_NONE;
          files.lack[fi] = LACK_UNREADABLE;
          return;
        }
        if (r.missing[j]) {
          files.origin[fi] = ORIGIN_NONE;
          files.lack[fi] = 0;
          files.size[fi] = -1; // gone before it could be read: compared as changed if it reappears
          return;
        }
        if (r.binary[j]) files.binary[fi] = 1;
        if (r.offset[j]! >= 0) {
          files.origin[fi] = ORIGIN_SNAPSHOT;
          files.snapOffset[fi] = r.offset[j]!;
          files.snapLength[fi] = r.length[j]!;
          return;
        }
        const tooLarge = r.size[j]! > input.limits.maxSnapshotBytes;
        if (r.hashed[j]) {
          files.origin[fi] = ORIGIN_HASH;
          r.oids.subarray(j * 20, j * 20 + 20).forEach((b, k) => (files.oids[fi * 20 + k] = b));
          files.lack[fi] = tooLarge ? LACK_TOO_LARGE : r.binary[j] ? 0 : LACK_MEMORY_CAP;
        } else {
          files.origin[fi] = ORIGIN_NONE;
          files.lack[fi] = tooLarge ? LACK_TOO_LARGE : LACK_MEMORY_CAP;
        }
      });
    }
  }
  const reasons = [...phase.reasons];
  if (memoryCapHit) addReason(reasons, 'memory_cap');
  if (readFailure !== null) addReason(reasons, readFailure);
  const checkpoint: Checkpoint = {
    root: input.root,
    kind: input.kind,
    scanMode: phase.gitFailed || input.kind !== 'git' ? 'filesystem' : 'git',
    scanStartedAtMs,
    startedAt,
    files,
    block,
    areas: phase.areas,
    coverage: phase.coverage,
    ignore: phase.ignore,
    reasons,
    memoryBytes: block.byteLength,
    durationMs: performance.now() - t0,
  };
  return { checkpoint, grantedBytes: granted };
}
