import fs from 'node:fs';
import { withReachablePath } from '../../fs/index.ts';
import type { Limits, TruncatedReason } from '../../../shared/index.ts';
import type { CandidateChange, FileSide } from '../../delta/types.ts';
import { checkAttrs, isBinaryByAttrs, readBlobs } from '../../git/index.ts';
import {
  createFsIgnore,
  MODE_EXEC,
  MODE_FILE,
  MODE_LINK,
  modeText,
  type ReadResult,
  type Scanner,
} from '../../workspace/index.ts';
import type { PathKey } from '../../paths/index.ts';
import { blobId } from '../../workspace/read-contents.ts';
import { keptBytes, type WalkCheckpoint } from './kept-bytes.ts';
import { covers } from './coverage.ts';
import { addReason, reasonFor } from '../common/reasons.ts';
import {
  HASH_READ_BUDGET_BYTES,
  LACK_MEMORY_CAP,
  LACK_TOO_LARGE,
  LACK_UNREADABLE,
  MAX_DIFF_READ_BYTES,
  ORIGIN_BLOB,
  ORIGIN_HASH,
  ORIGIN_NONE,
  ORIGIN_SNAPSHOT,
  type Checkpoint,
  type IgnoreState,
} from '../model.ts';
import type { CollectedChanges } from '../strategy.ts';
import { span, traced } from '../common/trace.ts';
import { oidHex, sideFromRead } from '../common/read-side.ts';
import { runScanPhase, type ScanPhase, type ScanPhaseInput } from './scan-phase.ts';
import { createYielder } from '../common/yield.ts';
import { settledBefore, untouchedSince } from '../common/untouched.ts';

/** The file at row `ci` of the checkpoint stands there now with the stat it had then. */
function statAsAtCheckpoint(cp: Checkpoint, ci: number): boolean {
  const f = cp.files;
  let st: fs.Stats;
  try {
    st = withReachablePath(
      Buffer.concat([
        Buffer.from(cp.root.endsWith('/') ? cp.root : cp.root + '/'),
        Buffer.from(f.paths[ci]!, 'latin1'),
      ]),
      (q) => fs.lstatSync(q),
    );
  } catch {
    return false;
  }
  const mode = st.isSymbolicLink() ? MODE_LINK : st.isFile() ? (st.mode & 0o100 ? MODE_EXEC : MODE_FILE) : -1;
  // A racy entry's stat proves nothing by itself (B3), unless its times show it settled before the
  // checkpoint began: a later write would have moved its ctime.
  return (
    (!f.racy[ci] || settledBefore(st, cp.scanStartedAtMs)) &&
    mode === f.mode[ci] &&
    st.size === f.size[ci] &&
    st.mtimeMs === f.mtimeMs[ci] &&
    st.ctimeMs === f.ctimeMs[ci] &&
    st.ino === f.ino[ci]
  );
}

/**
 * Whether the checkpoint's ignore rules skipped `p`: git's decisions (a skipped file, or a file in a
 * folder it ignored whole) or, outside git, the file-system rules with the root `.gitignore` then.
 */
function ignoredAtCheckpoint(cp: Checkpoint): (p: PathKey) => boolean {
  const dirsOf = (p: PathKey): PathKey[] => {
    const out: PathKey[] = [];
    for (let slash = p.indexOf('/'); slash !== -1; slash = p.indexOf('/', slash + 1)) out.push(p.slice(0, slash));
    return out;
  };
  const nameOf = (p: PathKey) => p.slice(p.lastIndexOf('/') + 1);
  if (cp.scanMode === 'filesystem') {
    const rules = createFsIgnore(cp.gitignoreText ?? null);
    return (p) => rules.ignoresFile(p, nameOf(p)) || dirsOf(p).some((d) => rules.ignoresDir(d, nameOf(d)));
  }
  const skipped = new Set(cp.ignore.skipFiles);
  const pruned = new Set(cp.ignore.pruneDirs);
  return (p) => skipped.has(p) || dirsOf(p).some((d) => pruned.has(d));
}

/**
 * Completion, up to the delta: scan again, pick candidates by stat (changed size, mtime, ctime,
 * inode or mode), racy files, added and deleted paths; read only the candidates and compare them
 * with their start content (snapshot, blob id or hash). Equal content and mode is not a change
 * (B2). What remains goes to the delta with both sides' bytes.
 */

export interface ChangesContext {
  limits: Readonly<Limits>;
  scanner: Scanner;
  gitTimeoutMs: number;
  ownFiles: PathKey[];
  rootGitDir: string | null;
  /** Told of a walk that failed on an exception (answered `degraded`): the caller logs it with context. */
  reportFailure?: (what: string, err: unknown) => void;
  /** The scan phase (default: a whole walk; a plain folder's watched walk). */
  scanPhase?: (input: ScanPhaseInput) => Promise<ScanPhase>;
}

export interface ChangesResult extends CollectedChanges {
  /** git's ignore decisions at completion (the next checkpoint of this folder starts from them). */
  ignore: IgnoreState | null;
}

export async function collectChanges(cp: WalkCheckpoint, ctx: ChangesContext): Promise<ChangesResult> {
  const f = cp.files;
  const step = span();
  // Every per-file loop below gives the event loop a turn now and then (50,000 new files).
  const y = createYielder();
  const known = new Map<PathKey, number>();
  for (let i = 0; i < f.paths.length; i++) {
    known.set(f.paths[i]!, i);
    if (y.due()) await y.pause();
  }
  const phase = await (ctx.scanPhase ?? runScanPhase)({
    root: cp.root,
    scanMode: cp.scanMode,
    withIndex: false,
    fallbackIgnore: cp.scanMode === 'git' ? cp.ignore : null,
    // The ignore state rarely changes during a run: walk with the checkpoint's while git lists.
    guessIgnore: cp.scanMode === 'git' ? cp.ignore : null,
    // A file tracked from the checkpoint stays tracked even if it became ignored during the run.
    keepFiles: known,
    ownFiles: ctx.ownFiles,
    limits: ctx.limits,
    scanner: ctx.scanner,
    gitTimeoutMs: ctx.gitTimeoutMs,
    rootGitDir: ctx.rootGitDir,
    ...(ctx.reportFailure ? { reportFailure: ctx.reportFailure } : {}),
  });
  step('scan phase');
  const reasons = [...cp.reasons.filter((r) => r !== 'memory_cap'), ...phase.reasons];
  const now = phase.table;

  const seen = new Uint8Array(f.paths.length);
  const compare: { ci: number; ni: number; statChanged: boolean }[] = [];
  const added: number[] = [];
  const ignoredThen = ignoredAtCheckpoint(cp);
  // A file the checkpoint's rules skipped and that no one touched since before it (a run that
  // deletes a .gitignore un-ignores it) stood there with these bytes at both ends: not a change.
  const untouchedThen = (p: PathKey) => ignoredThen(p) && untouchedSince(cp.root, '', p, cp.scanStartedAtMs);
  for (let ni = 0; ni < now.paths.length; ni++) {
    if (y.due()) await y.pause();
    const p = now.paths[ni]!;
    const ci = known.get(p);
    if (ci === undefined) {
      if (covers(cp.coverage, p, { respectPruned: false }) && !untouchedThen(p)) added.push(ni);
      continue;
    }
    seen[ci] = 1;
    const statChanged =
      f.size[ci] !== now.size[ni] ||
      f.mtimeMs[ci] !== now.mtimeMs[ni] ||
      f.ctimeMs[ci] !== now.ctimeMs[ni] ||
      f.ino[ci] !== now.ino[ni] ||
      f.mode[ci] !== now.mode[ni];
    if (statChanged || (f.racy[ci] && f.origin[ci] !== ORIGIN_NONE)) compare.push({ ci, ni, statChanged });
  }
  const deleted: number[] = [];
  // Outside git a file the run's new root .gitignore ignores is not walked at completion: one still
  // there with its checkpoint stat is no change (one whose stat moved is still answered deleted).
  const ignoredNow = cp.scanMode === 'filesystem' && phase.gitignoreText !== (cp.gitignoreText ?? null);
  for (let ci = 0; ci < f.paths.length; ci++) {
    if (y.due()) await y.pause();
    if (!seen[ci] && f.size[ci]! >= 0 && covers(phase.coverage, f.paths[ci]!, { respectPruned: true })) {
      if (ignoredNow && statAsAtCheckpoint(cp, ci)) continue;
      deleted.push(ci);
    }
  }

  // Current bytes of every candidate, in the worker.
  const readIdx = [...compare.map((c) => c.ni), ...added];
  let cur: ReadResult | null = null;
  if (readIdx.length > 0) {
    const links = Uint8Array.from(readIdx.map((ni) => (now.mode[ni] === MODE_LINK ? 1 : 0)));
    step('compare');
    cur = await traced(
      `read ${readIdx.length}`,
      ctx.scanner.read({
        root: cp.root,
        paths: readIdx.map((ni) => now.paths[ni]!),
        links,
        sizes: Float64Array.from(readIdx.map((ni) => now.size[ni]!)),
        keepMaxBytes: MAX_DIFF_READ_BYTES,
        keepBudgetBytes: ctx.limits.maxCheckpointMemoryBytes,
        keepBinary: true,
        hashBudgetBytes: HASH_READ_BUDGET_BYTES,
        hashKept: true,
      }),
    );
  }
  const curSide = (j: number, ni: number): FileSide | null => sideFromRead(cur!, j, modeText(now.mode[ni]!), reasons);

  // Start sides; blobs are fetched afterwards in one batch per repository.
  const blobWanted = new Map<number, string[]>();
  const startSide = (ci: number): FileSide => {
    const mode = modeText(f.mode[ci]!);
    const origin = f.origin[ci];
    if (origin === ORIGIN_SNAPSHOT) {
      const bytes = keptBytes(cp, ci);
      return { bytes, size: bytes.length, mode };
    }
    const side: FileSide = { bytes: null, size: f.size[ci]!, mode };
    if (origin === ORIGIN_BLOB || origin === ORIGIN_HASH) side.oid = oidHex(f.oids, ci);
    if (origin === ORIGIN_BLOB) {
      if (f.size[ci]! > MAX_DIFF_READ_BYTES) side.unavailable = 'too_large';
      else {
        const list = blobWanted.get(f.area[ci]!) ?? [];
        list.push(side.oid!);
        blobWanted.set(f.area[ci]!, list);
      }
      return side;
    }
    if (f.binary[ci]) side.binaryAttr = true;
    side.unavailable =
      f.lack[ci] === LACK_TOO_LARGE ? 'too_large' : f.lack[ci] === LACK_UNREADABLE ? 'unreadable' : 'no_snapshot';
    if (f.lack[ci] === LACK_MEMORY_CAP) addReason(reasons, 'memory_cap');
    return side;
  };

  const changes: CandidateChange[] = [];
  for (let j = 0; j < compare.length; j++) {
    if (y.due()) await y.pause();
    const { ci, ni, statChanged } = compare[j]!;
    const after = curSide(j, ni);
    if (after === null) {
      changes.push({ path: f.paths[ci]!, before: startSide(ci), after: null });
      continue;
    }
    // Compared only because its stat was racy, and unreadable now: nothing says it changed.
    if (after.unavailable === 'unreadable' && !statChanged) continue;
    const origin = f.origin[ci];
    let same = false;
    if (f.mode[ci] === now.mode[ni]) {
      if (origin === ORIGIN_SNAPSHOT) {
        const snap = keptBytes(cp, ci);
        same = after.bytes
          ? snap.equals(after.bytes)
          : after.oid !== undefined && after.oid === blobId(snap).toString('hex');
      } else if (origin === ORIGIN_BLOB || origin === ORIGIN_HASH) {
        same = after.oid !== undefined && after.oid === oidHex(f.oids, ci);
      }
    }
    if (!same) changes.push({ path: f.paths[ci]!, before: startSide(ci), after });
  }
  for (let k = 0; k < added.length; k++) {
    if (y.due()) await y.pause();
    const ni = added[k]!;
    const after = curSide(compare.length + k, ni);
    if (after) changes.push({ path: now.paths[ni]!, before: null, after });
  }
  for (const ci of deleted) {
    if (y.due()) await y.pause();
    changes.push({ path: f.paths[ci]!, before: startSide(ci), after: null });
  }

  // Blobs of changed clean files (one cat-file per repository: objects only, no filters, B26) and
  // the attributes of the changed paths are independent: both git calls run at once.
  const attributes =
    cp.scanMode === 'git' && changes.length > 0
      ? markBinaryByAttributes(cp, changes, ctx.gitTimeoutMs, reasons)
      : Promise.resolve();
  await Promise.all([fillBlobs(cp, blobWanted, changes, ctx.gitTimeoutMs, reasons), attributes]);
  step('blobs and attributes');
  return { changes, reasons, ignore: phase.gitFailed ? null : phase.ignore };
}

/** The start bytes of changed clean files, read from their repositories' objects. */
async function fillBlobs(
  cp: Checkpoint,
  blobWanted: ReadonlyMap<number, string[]>,
  changes: CandidateChange[],
  timeoutMs: number,
  reasons: TruncatedReason[],
): Promise<void> {
  if (blobWanted.size === 0) return;
  const blobs = new Map<string, Buffer>();
  await Promise.all(
    [...blobWanted].map(async ([area, oids]) => {
      const a = cp.areas[area];
      if (!a) return;
      try {
        for (const [k, v] of await readBlobs(a.cwd, oids, { timeoutMs })) blobs.set(k, v);
      } catch (err) {
        addReason(reasons, reasonFor(err));
      }
    }),
  );
  for (const c of changes) {
    const b = c.before;
    if (!b || b.bytes || b.unavailable || !b.oid) continue;
    const bytes = blobs.get(b.oid);
    if (bytes) {
      b.bytes = bytes;
      b.size = bytes.length;
    } else {
      b.unavailable = 'no_snapshot';
      addReason(reasons, 'degraded');
    }
  }
}

/** Paths per check-attr call. */
const ATTR_BATCH = 5_000;

/** `binary` / `-diff` attributes of the changed paths (check-attr runs no driver, B10, B26). */
export async function markBinaryByAttributes(
  cp: Pick<Checkpoint, 'areas'>,
  changes: CandidateChange[],
  timeoutMs: number,
  reasons: TruncatedReason[],
): Promise<void> {
  // Longest prefix first: a nested repository's own attributes apply inside it.
  const areas = cp.areas.map((a, i) => ({ a, i })).sort((x, y) => y.a.prefix.length - x.a.prefix.length);
  const byArea = new Map<number, CandidateChange[]>();
  const yb = createYielder();
  for (const c of changes) {
    if (yb.due()) await yb.pause();
    const hit = areas.find(({ a }) => c.path.startsWith(a.prefix));
    if (!hit) continue;
    const list = byArea.get(hit.i) ?? [];
    list.push(c);
    byArea.set(hit.i, list);
  }
  const y = createYielder();
  for (const [i, all] of byArea) {
    const area = cp.areas[i]!;
    try {
      // In batches: parsing one answer for 50,000 paths would hold the event loop for ~100 ms.
      for (let from = 0; from < all.length; from += ATTR_BATCH) {
        const list = all.slice(from, from + ATTR_BATCH);
        const attrs = await checkAttrs(
          area.cwd,
          list.map((c) => c.path.slice(area.prefix.length)),
          ['binary', 'diff'],
          { timeoutMs },
        );
        for (const c of list) {
          if (y.due()) await y.pause();
          if (!isBinaryByAttrs(attrs.get(c.path.slice(area.prefix.length)))) continue;
          if (c.before) c.before.binaryAttr = true;
          if (c.after) c.after.binaryAttr = true;
        }
      }
    } catch (err) {
      addReason(reasons, reasonFor(err));
    }
  }
}
