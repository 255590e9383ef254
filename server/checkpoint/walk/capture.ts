import type { Limits, TruncatedReason, WorkspaceKind } from '../../../shared/index.ts';
import type { IndexEntry } from '../../git/index.ts';
import { modeText, type Scanner } from '../../workspace/index.ts';
import type { PathKey } from '../../paths/index.ts';
import { blobSizes, sizeAgrees } from '../common/blob-sizes.ts';
import { addReason, reasonFor } from '../common/reasons.ts';
import { ORIGIN_BLOB, ORIGIN_NONE, RACY_MARGIN_MS, type FileTable, type IgnoreState } from '../model.ts';
import { readStartContents } from '../common/start-contents.ts';
import { span } from '../common/trace.ts';
import { reuseHeldContents, shareHeldBytes, withHeldBytes, type HeldCheckpoint } from './held-contents.ts';
import type { WalkCheckpoint } from './kept-bytes.ts';
import { runScanPhase, type AreaIndex, type ScanPhase, type ScanPhaseInput } from './scan-phase.ts';

/**
 * Takes a checkpoint by walking the workspace. In a git workspace a tracked file whose lstat matches its index entry (and is
 * not racy by git's rule) is clean: its start content is its blob, recorded by id only. Every other
 * file (dirty, untracked, conflicted, or any file outside git) is read once: text within the
 * snapshot cap and the memory grant is kept, the rest keeps its blob id (sha1) only. A file that
 * another checkpoint of the folder still held recorded with the same lstat is not read again: its
 * start content is taken from there, shared rather than copied (held-contents.ts).
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
  /** The scan phase (default: a whole walk; a plain folder's watched walk). */
  scanPhase?: (input: ScanPhaseInput) => Promise<ScanPhase>;
  /** A checkpoint of this folder the engine holds: the start contents of unchanged files are taken from it (shared, or copied), not read. */
  held?: HeldCheckpoint | null;
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

/**
 * The clean files among `blobbed` whose blob size is not the size their index entry recorded:
 * one `git cat-file --batch-check` per repository (objects only). The walk has no listing of the
 * repository's config to tell whether anything converts, so it always asks; it is the fallback.
 */
async function convertedOnWalk(
  files: FileTable,
  blobbed: readonly number[],
  areas: readonly { cwd: string }[],
  timeoutMs: number,
  reasons: TruncatedReason[],
): Promise<number[]> {
  const byArea = new Map<number, number[]>();
  for (const i of blobbed) {
    const list = byArea.get(files.area[i]!) ?? [];
    list.push(i);
    byArea.set(files.area[i]!, list);
  }
  const out: number[] = [];
  const oid = (i: number) => Buffer.from(files.oids.subarray(i * 20, i * 20 + 20)).toString('hex');
  await Promise.all(
    [...byArea].map(async ([a, list]) => {
      const area = areas[a];
      if (!area) return;
      try {
        const sizes = await blobSizes(area.cwd, list.map(oid), timeoutMs);
        for (const i of list) if (!sizeAgrees(sizes.get(oid(i)), files.size[i]!)) out.push(i);
      } catch (err) {
        addReason(reasons, reasonFor(err));
      }
    }),
  );
  return out;
}

export async function captureCheckpoint(
  input: CaptureInput,
): Promise<{ checkpoint: WalkCheckpoint; grantedBytes: number }> {
  const startedAt = input.now();
  const scanStartedAtMs = Date.now();
  const t0 = performance.now();
  const phase = await (input.scanPhase ?? runScanPhase)({
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
  const blobbed: number[] = [];
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
        blobbed.push(i);
        continue;
      }
    }
    toRead.push(i);
  }
  // A clean file git converts (line endings, ident, a filter) is not its blob: its blob's size is
  // not the size the index recorded for the file. Those are read like dirty files.
  const converted = await convertedOnWalk(files, blobbed, phase.areas, input.gitTimeoutMs, phase.reasons);
  if (converted.length > 0) {
    for (const i of converted) files.origin[i] = ORIGIN_NONE;
    toRead.push(...converted);
    toRead.sort((x, y) => x - y);
  }

  classified('classify');
  const held = input.held ?? null;
  const reuse = reuseHeldContents(files, toRead, held?.files ?? null, input.reserveMemory);
  const read = await readStartContents(files, reuse.rest, input);
  const state = held ? shareHeldBytes(files, reuse.copies, held) : null;
  const block = held && !state ? withHeldBytes(files, reuse.copies, held, read.block) : read.block;
  const granted = read.granted + reuse.granted;
  const reasons = [...phase.reasons];
  if (read.memoryCapHit) addReason(reasons, 'memory_cap');
  if (read.readFailure !== null) addReason(reasons, read.readFailure);
  const checkpoint: WalkCheckpoint = {
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
    gitignoreText: phase.gitignoreText,
    reasons,
    // The bytes shared with the held checkpoint count as this one's too: it keeps them alive.
    memoryBytes: block.byteLength + (state ? reuse.copies.reduce((n, c) => n + files.snapLength[c.fi]!, 0) : 0),
    durationMs: performance.now() - t0,
    state,
  };
  return { checkpoint, grantedBytes: granted };
}
