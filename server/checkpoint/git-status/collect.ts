import type { Limits, TruncatedReason } from '../../../shared/index.ts';
import type { CandidateChange, FileSide } from '../../delta/types.ts';
import { checkAttrs, isBinaryByAttrs, readBlobs } from '../../git/index.ts';
import type { PathKey } from '../../paths/index.ts';
import { MODE_LINK, modeText, type Scanner } from '../../workspace/index.ts';
import { blobId } from '../../workspace/read-contents.ts';
import type { CollectedChanges } from '../strategy.ts';
import type { ConfigCache, IndexCache } from './repository.ts';
import { changedEntries, cleanEntry, entryPath, IX_GITLINK, type IndexSnapshot } from './index-snapshot.ts';
import { addReason, reasonFor } from '../common/reasons.ts';
import {
  HASH_READ_BUDGET_BYTES,
  LACK_MEMORY_CAP,
  LACK_TOO_LARGE,
  LACK_UNREADABLE,
  MAX_DIFF_READ_BYTES,
  ORIGIN_HASH,
  ORIGIN_NONE,
  ORIGIN_SNAPSHOT,
  type Checkpoint,
} from '../model.ts';
import { byFolder, recentSince, reportable, statKeys } from './capture.ts';
import {
  inUnlisted,
  listWorkspace,
  ownerOf,
  type AreaState,
  type GitStatusListing,
  type ListingContext,
} from './listing.ts';
import { oidHex, sideFromRead } from '../common/read-side.ts';
import { addUnopenedFiles } from './unopened.ts';
import { sameFolderAbove, untouchedSince } from '../common/untouched.ts';
import { span, traced } from '../common/trace.ts';
import { createYielder } from '../common/yield.ts';

/**
 * Completion of a checkpoint git vouched for. git is asked again; a path can only have changed if
 * git could not vouch for it at one end (dirty, untracked, flagged), or if its index entry changed
 * between the ends (a commit, checkout, reset, stash or `git add` during the run). Each such path
 * gets its start side (the bytes read at the checkpoint, or its index blob then) and its end side
 * (read now, or its index blob now when git vouches that the file matches it); equal content and
 * mode is no change.
 */

export interface GitStatusCollectContext {
  limits: Readonly<Limits>;
  scanner: Scanner;
  /** The listing's deadline (git status, config); the blob and attribute calls use it too. */
  gitTimeoutMs: number;
  ownFiles: PathKey[];
  indexCache: IndexCache;
  configCache: ConfigCache;
  reportFailure?: (what: string, err: unknown) => void;
  /** How the workspace is listed (a watcher may vouch for most of it). Default: the whole tree. */
  list?: (ctx: ListingContext) => Promise<GitStatusListing>;
}

interface BlobSide {
  side: FileSide;
  area: AreaState;
}

/** Every path of `ix` (stage 0 or not), prefixed. */
function allEntries(ix: IndexSnapshot, prefix: PathKey): PathKey[] {
  const out: PathKey[] = [];
  for (let i = 0; i < ix.count; i++) {
    if (ix.mode[i] === IX_GITLINK) continue;
    const p = prefix + entryPath(ix, i);
    if (out[out.length - 1] !== p) out.push(p);
  }
  return out;
}

/** Paths either listing cannot vouch for, or whose index entry is not the same at both ends. */
function candidatePaths(start: GitStatusListing, end: GitStatusListing): PathKey[] {
  const out = new Set<PathKey>();
  const endBy = new Map(end.areas.map((a) => [a.area.prefix, a]));
  const startBy = new Map(start.areas.map((a) => [a.area.prefix, a]));
  for (const a of start.areas) {
    for (const p of a.dirty) out.add(p);
    const b = endBy.get(a.area.prefix);
    const paths = b && b.area.gitDir === a.area.gitDir ? changedEntries(a.index, b.index) : allEntries(a.index, '');
    for (const p of paths) out.add(a.area.prefix + p);
  }
  for (const b of end.areas) {
    for (const p of b.dirty) out.add(p);
    const a = startBy.get(b.area.prefix);
    if (!a || a.area.gitDir !== b.area.gitDir) for (const p of allEntries(b.index, b.area.prefix)) out.add(p);
  }
  return [...out].sort(byFolder);
}

export async function collectGitStatusChanges(
  cp: Checkpoint<GitStatusListing>,
  ctx: GitStatusCollectContext,
): Promise<CollectedChanges> {
  const start = cp.state;
  const step = span();
  const y = createYielder();
  const reasons: TruncatedReason[] = [...cp.reasons.filter((r) => r !== 'memory_cap')];
  let end: GitStatusListing;
  try {
    end = await (ctx.list ?? listWorkspace)({
      root: cp.root,
      rootArea: start.rootArea,
      timeoutMs: ctx.gitTimeoutMs,
      indexCache: ctx.indexCache,
      configCache: ctx.configCache,
      recentSinceSec: recentSince(cp.scanStartedAtMs),
    });
  } catch (err) {
    // git cannot answer now: only the paths it could not vouch for at the start are compared,
    // and the answer says it is incomplete.
    addReason(reasons, reasonFor(err));
    end = { ...start, areas: start.areas.map((a) => ({ ...a, dirty: new Set(a.dirty) })), reasons: [] };
  }
  step('git status listing');
  for (const r of end.reasons) addReason(reasons, r);
  // Folders git could not open (too long for it, made during the run) are walked for their files.
  await addUnopenedFiles(
    end.areas,
    {
      root: cp.root,
      limits: ctx.limits,
      scanner: ctx.scanner,
      timeoutMs: ctx.gitTimeoutMs,
      ownFiles: ctx.ownFiles,
      reportFailure: ctx.reportFailure,
    },
    reasons,
  );
  step('folders git could not open');
  const own = new Set(ctx.ownFiles);
  const unlisted = [...start.unlisted, ...end.unlisted];
  const candidates = candidatePaths(start, end).filter((p) => reportable(p, own) && !inUnlisted(unlisted, p));

  const f = cp.files;
  const atStart = new Map<PathKey, number>();
  for (let i = 0; i < f.paths.length; i++) atStart.set(f.paths[i]!, i);
  // Ignored at the start and stat'ed then: compared with that stat (and its bytes, when read).
  const ignoredThen = (p: PathKey): boolean =>
    atStart.has(p) &&
    ownerOf(start.areas, p)?.ignored.has(p) === true &&
    ownerOf(start.areas, p)?.dirty.has(p) !== true;

  // End sides: read now unless git vouches that the file is its index blob.
  const toRead: PathKey[] = [];
  const endBlob = new Map<PathKey, BlobSide>();
  for (const p of candidates) {
    if (y.due()) await y.pause();
    const owner = ownerOf(end.areas, p);
    const entry =
      owner && !owner.dirty.has(p) && !ignoredThen(p)
        ? cleanEntry(owner.index, p.slice(owner.area.prefix.length))
        : null;
    if (owner && entry)
      endBlob.set(p, { side: { bytes: null, size: entry.size, mode: entry.mode, oid: entry.oid }, area: owner });
    else toRead.push(p);
  }
  const now = await statKeys(cp.root, toRead, Date.now());
  const nowAt = new Map<PathKey, number>();
  for (let i = 0; i < now.paths.length; i++) nowAt.set(now.paths[i]!, i);
  const statSame = (p: PathKey): boolean => {
    const ci = atStart.get(p);
    const ni = nowAt.get(p);
    return (
      ci !== undefined &&
      ni !== undefined &&
      f.size[ci] === now.size[ni] &&
      f.mtimeMs[ci] === now.mtimeMs[ni] &&
      f.ctimeMs[ci] === now.ctimeMs[ni] &&
      f.ino[ci] === now.ino[ni] &&
      f.mode[ci] === now.mode[ni]
    );
  };
  // A file dirty at both ends whose stat did not move (and was not racy then) is the file read at the start.
  const readIdx: number[] = [];
  for (let ni = 0; ni < now.paths.length; ni++) {
    const ci = atStart.get(now.paths[ni]!);
    if (ci !== undefined && !f.racy[ci] && statSame(now.paths[ni]!)) continue;
    readIdx.push(ni);
  }
  const readPos = new Map<number, number>();
  readIdx.forEach((ni, j) => readPos.set(ni, j));

  // Start sides: the bytes read at the checkpoint, or the index blob git vouched for then.
  const startBlob = new Map<PathKey, BlobSide>();
  const startSide = (p: PathKey): FileSide | null => {
    const owner = ownerOf(start.areas, p);
    if (owner && (owner.dirty.has(p) || ignoredThen(p))) {
      const ci = atStart.get(p);
      if (ci === undefined) return null; // git listed it, but it was gone (deleted in the work tree)
      const mode = modeText(f.mode[ci]!);
      const origin = f.origin[ci];
      if (origin === ORIGIN_SNAPSHOT) {
        const bytes = cp.block.subarray(f.snapOffset[ci], f.snapOffset[ci]! + f.snapLength[ci]!);
        return { bytes, size: bytes.length, mode };
      }
      if (f.size[ci]! < 0) return null; // gone before it could be read
      const side: FileSide = { bytes: null, size: f.size[ci]!, mode };
      if (origin === ORIGIN_HASH) side.oid = oidHex(f.oids, ci);
      if (f.binary[ci]) side.binaryAttr = true;
      side.unavailable =
        f.lack[ci] === LACK_TOO_LARGE ? 'too_large' : f.lack[ci] === LACK_UNREADABLE ? 'unreadable' : 'no_snapshot';
      if (f.lack[ci] === LACK_MEMORY_CAP) addReason(reasons, 'memory_cap');
      return side;
    }
    const entry = owner ? cleanEntry(owner.index, p.slice(owner.area.prefix.length)) : null;
    if (!owner || !entry) return null;
    const side: FileSide = { bytes: null, size: entry.size, mode: entry.mode, oid: entry.oid };
    startBlob.set(p, { side, area: owner });
    return side;
  };
  const starts = new Map<PathKey, FileSide | null>();
  for (const p of candidates) starts.set(p, startSide(p));

  // The paths that may have changed: all but those dirty at both ends with an unmoved stat.
  const maybe = candidates.filter((p) => {
    const ni = nowAt.get(p);
    return ni === undefined || readPos.has(ni);
  });
  const maybeSet = new Set(maybe);
  // A path read now only as a precaution (its index entry was recorded too close to the
  // checkpoint) is usually unchanged: its start blob is read only if its content hash now differs.
  const precaution = (p: PathKey) => ownerOf(end.areas, p)?.recent.has(p) === true;
  const later: [PathKey, BlobSide][] = [];
  const blobSides: BlobSide[] = [];
  for (const [p, b] of startBlob) {
    if (!maybeSet.has(p)) continue;
    if (precaution(p) && !endBlob.has(p)) later.push([p, b]);
    else blobSides.push(b);
  }
  for (const [p, b] of endBlob) if (maybeSet.has(p)) blobSides.push(b);
  // Three independent things at once: the work-tree reads (scan worker), the blobs of both ends
  // (objects only: no filter runs) and the attributes (no driver runs).
  const attrAreas = end.areas.map((a) => ({ prefix: a.area.prefix, cwd: a.area.cwd, attributes: a.attributes }));
  const [cur, , binaryByAttr] = await Promise.all([
    readIdx.length === 0
      ? Promise.resolve(null)
      : traced(
          `read ${readIdx.length}`,
          ctx.scanner.read({
            root: cp.root,
            paths: readIdx.map((ni) => now.paths[ni]!),
            links: Uint8Array.from(readIdx.map((ni) => (now.mode[ni] === MODE_LINK ? 1 : 0))),
            sizes: Float64Array.from(readIdx.map((ni) => now.size[ni]!)),
            keepMaxBytes: MAX_DIFF_READ_BYTES,
            keepBudgetBytes: ctx.limits.maxCheckpointMemoryBytes,
            keepBinary: true,
            hashBudgetBytes: HASH_READ_BUDGET_BYTES,
            hashKept: true,
          }),
        ),
    traced('blobs', fillBlobSides(blobSides, ctx.gitTimeoutMs, reasons)),
    traced('attributes', binaryPaths(attrAreas, maybe, ctx.gitTimeoutMs, reasons)),
  ]);
  step('reads, blobs and attributes');

  /** The end side of a path read now: null = gone; 'unchanged' = same stat as at the start. */
  const readSides = new Map<PathKey, FileSide | null | 'unchanged'>();
  const readSide = (p: PathKey): FileSide | null | 'unchanged' => {
    let side = readSides.get(p);
    if (side !== undefined) return side;
    const ni = nowAt.get(p);
    const j = ni === undefined ? undefined : readPos.get(ni);
    side =
      ni === undefined ? null : j === undefined ? 'unchanged' : sideFromRead(cur!, j, modeText(now.mode[ni]!), reasons);
    readSides.set(p, side);
    return side;
  };
  // The precautions that are not their start blob now (gone, another mode, content not hashed or
  // different): their start bytes are needed after all.
  const differing = later.filter(([p, b]) => {
    const side = readSide(p);
    if (side === 'unchanged') return false;
    return side === null || side.mode !== b.side.mode || side.oid === undefined || side.oid !== b.side.oid;
  });
  if (differing.length > 0) {
    await traced(
      'late blobs',
      fillBlobSides(
        differing.map(([, b]) => b),
        ctx.gitTimeoutMs,
        reasons,
      ),
    );
  }

  const changes: CandidateChange[] = [];
  for (const p of maybe) {
    if (y.due()) await y.pause();
    const blobNow = endBlob.get(p);
    const readNow = blobNow ? null : readSide(p);
    if (readNow === 'unchanged') continue;
    const after = blobNow ? blobNow.side : readNow;
    const before = starts.get(p) ?? null;
    if (before === null && after === null) continue;
    // New to git's listing but there, untouched, since before the checkpoint: a file git ignored
    // then (a run that deletes a .gitignore un-ignores it). Its bytes did not change: no change.
    if (before === null && untouchedThen(p)) continue;
    if (before && after && before.mode === after.mode) {
      const ci = atStart.get(p);
      const snap = ci !== undefined && before.bytes !== null && f.origin[ci] === ORIGIN_SNAPSHOT ? before.bytes : null;
      if (snap && after.bytes && snap.equals(after.bytes)) continue;
      const beforeOid = before.oid ?? (snap ? blobId(snap).toString('hex') : undefined);
      if (beforeOid !== undefined && after.oid !== undefined && beforeOid === after.oid) continue;
      // Without content at the start, or unreadable now, only its stat can say it changed.
      if (ci !== undefined && (f.origin[ci] === ORIGIN_NONE || after.unavailable === 'unreadable') && statSame(p))
        continue;
    }
    if (binaryByAttr.has(p)) {
      if (before) before.binaryAttr = true;
      if (after) after.binaryAttr = true;
    }
    changes.push({ path: p, before, after });
  }
  step('compare');
  return { changes, reasons };

  function untouchedThen(p: PathKey): boolean {
    if (!ownerOf(start.areas, p)) return false;
    const base = sameFolderAbove(cp.root, start.ignoredFolders ?? new Map(), p);
    return untouchedSince(cp.root, base, p, cp.scanStartedAtMs);
  }
}

/** Paths per check-attr call: parsing one answer for 50,000 paths would hold the event loop for ~100 ms. */
const ATTR_BATCH = 5_000;

/** The paths marked `binary` or `-diff` by their repository's attributes (check-attr runs no driver). */
async function binaryPaths(
  areas: readonly { prefix: PathKey; cwd: string; attributes: boolean }[],
  paths: readonly PathKey[],
  timeoutMs: number,
  reasons: TruncatedReason[],
): Promise<Set<PathKey>> {
  const out = new Set<PathKey>();
  const byArea = new Map<number, PathKey[]>();
  for (const p of paths) {
    // Areas come longest prefix first: a nested repository's own attributes apply inside it.
    const i = areas.findIndex((a) => p.startsWith(a.prefix));
    // No attribute file anywhere in that repository: git would answer "unspecified" for all.
    if (i === -1 || !areas[i]!.attributes) continue;
    const list = byArea.get(i) ?? [];
    list.push(p);
    byArea.set(i, list);
  }
  await Promise.all(
    [...byArea].map(async ([i, all]) => {
      const area = areas[i]!;
      try {
        for (let from = 0; from < all.length; from += ATTR_BATCH) {
          const list = all.slice(from, from + ATTR_BATCH);
          const rel = list.map((p) => p.slice(area.prefix.length));
          const attrs = await checkAttrs(area.cwd, rel, ['binary', 'diff'], { timeoutMs });
          list.forEach((p, k) => {
            if (isBinaryByAttrs(attrs.get(rel[k]!))) out.add(p);
          });
        }
      } catch (err) {
        addReason(reasons, reasonFor(err));
      }
    }),
  );
  return out;
}

/** Reads the blobs of index-vouched sides (one cat-file per repository); sizes come from the index. */
async function fillBlobSides(sides: readonly BlobSide[], timeoutMs: number, reasons: TruncatedReason[]): Promise<void> {
  const byArea = new Map<AreaState, BlobSide[]>();
  for (const b of sides) {
    const list = byArea.get(b.area) ?? [];
    list.push(b);
    byArea.set(b.area, list);
  }
  await Promise.all(
    [...byArea].map(async ([area, list]) => {
      // A blob too large to diff is never read into memory.
      const small = list.filter((b) => b.side.size <= MAX_DIFF_READ_BYTES);
      let blobs = new Map<string, Buffer>();
      try {
        blobs = await readBlobs(area.area.cwd, [...new Set(small.map((b) => b.side.oid!))], { timeoutMs });
      } catch (err) {
        addReason(reasons, reasonFor(err));
      }
      for (const { side } of list) {
        const bytes = side.size <= MAX_DIFF_READ_BYTES ? blobs.get(side.oid!) : undefined;
        if (bytes && bytes.length <= MAX_DIFF_READ_BYTES) {
          side.bytes = bytes;
          side.size = bytes.length;
        } else if (side.size > MAX_DIFF_READ_BYTES || (bytes && bytes.length > MAX_DIFF_READ_BYTES)) {
          side.size = bytes ? bytes.length : side.size;
          side.unavailable = 'too_large';
        } else {
          side.unavailable = 'no_snapshot';
          addReason(reasons, 'degraded');
        }
      }
    }),
  );
}
