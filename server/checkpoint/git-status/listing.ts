import fs from 'node:fs';
import path from 'node:path';
import type { TruncatedReason } from '../../../shared/index.ts';
import { displayPath, type PathKey } from '../../paths/index.ts';
import {
  indexIdentity,
  indexOf,
  nestedRepoArea,
  listingConfig,
  readStatus,
  type ListingConfig,
  assertPlainIndex,
  type ConfigCache,
  type IndexCache,
  type RepoArea,
} from './repository.ts';
import {
  findEntry,
  flaggedPaths,
  gitlinkPaths,
  IX_GITLINK,
  recentPaths,
  tracksAttributes,
  type IndexSnapshot,
} from './index-snapshot.ts';
import { addReason, reasonFor } from '../common/reasons.ts';
import { attributeFilesAmong, mayConvert, sizeMismatches, trackedAttributeFiles } from './converted.ts';
import { traced } from '../common/trace.ts';

/**
 * What git says about a workspace at one end of a run: for the workspace's repository and every
 * repository nested in it, the index and the paths whose content git cannot vouch for (work tree
 * differs from the index, untracked, unmerged, or flagged so that git does not look).
 */
export interface AreaState {
  area: RepoArea;
  index: IndexSnapshot;
  /** False when nothing can give a path attributes here: then no `check-attr` is needed. */
  attributes: boolean;
  /** Workspace-relative keys (the area's prefix included). */
  dirty: Set<PathKey>;
  /**
   * The part of `dirty` that is there only because its index entry was recorded too close to the
   * checkpoint for git's whole-second times to vouch for it (completion only): usually unchanged.
   */
  recent: Set<PathKey>;
  /**
   * git could not open some folders here (their path is too long for one system call) and listed
   * nothing inside them: at a checkpoint the walk takes the workspace; at completion those
   * folders are walked (`unopened.ts`).
   */
  unopened: boolean;
  /**
   * At a checkpoint only (empty at completion): what git ignored then, as `git status
   * --ignored=matching` names it: files, and folders listed whole with a trailing slash (git does
   * not look inside). Workspace-relative keys. A file that a run un-ignores (by deleting or editing
   * a `.gitignore`) is compared with what it was here instead of being called new.
   */
  ignored: Set<PathKey>;
  /** git status's own answer, kept when a watcher may later list only the paths that changed since. */
  seen?: SeenStatus;
}

/** What git status said of an area (workspace-relative keys), and the config it was asked under. */
export interface SeenStatus {
  dirty: Set<PathKey>;
  ignored: Set<PathKey>;
  nested: PathKey[];
  config: ListingConfig;
}

export interface GitStatusListing {
  /** The workspace's own repository (asked again at completion). */
  rootArea: RepoArea;
  /** Longest prefix first, so the first area whose prefix a path starts with owns it. */
  areas: AreaState[];
  reasons: TruncatedReason[];
  /** Nested folders whose repository could not be listed: nothing is claimed inside them. */
  unlisted: PathKey[];
  /**
   * At a checkpoint: the inode of each folder git ignored whole then (key without its slash). A file
   * found in it at completion that no one touched since (see `untouchedSince`) was there at the start.
   */
  ignoredFolders?: Map<PathKey, number>;
}

export interface ListingContext {
  root: string;
  rootArea: RepoArea;
  timeoutMs: number;
  indexCache: IndexCache;
  configCache: ConfigCache;
  /**
   * At completion: index entries recorded at this second or later (the checkpoint's time less the
   * racy margin) are read and compared by content. Null at a checkpoint: a clean file's start
   * content is its blob, as git says.
   */
  recentSinceSec: number | null;
  /** Keep git status's own answer (`seen`), ignored files included, for a later listing `since` this one. */
  keepSeen?: boolean;
  /**
   * List only what changed since `base` (a listing with `seen`): git status is asked about
   * `changed` alone, everything else is as `base` found it. The caller vouches that nothing else
   * changed; what this listing can check itself (the index file, the config) throws
   * `NotVouchedError` when it moved.
   */
  since?: { base: GitStatusListing; changed: ReadonlySet<PathKey> };
}

/** A listing since a base cannot be made: `why` says what moved; the whole tree is listed instead. */
export class NotVouchedError extends Error {
  constructor(readonly why: string) {
    super(`not vouched: ${why}`);
  }
}

const MAX_NESTED_DEPTH = 8;
/** Nested repositories listed per workspace (each costs two git calls per end of a run). */
export const MAX_NESTED_REPOS = 64;
/** Attempts when the index file changes while it is listed (someone runs git at that moment). */
const INDEX_ATTEMPTS = 3;

/** Thrown when the index kept changing under the listing: the caller falls back to walking. */
export class IndexUnstableError extends Error {}

/** git status about the paths of `changed` only, merged into what it said of the rest at `base`. */
async function statusSince(
  area: RepoArea,
  config: ListingConfig,
  base: AreaState & { seen: SeenStatus },
  changed: readonly PathKey[],
  timeoutMs: number,
): Promise<{ dirty: PathKey[]; nested: PathKey[]; ignored: PathKey[]; unopened: boolean }> {
  const rel = (p: PathKey) => p.slice(area.prefix.length);
  const dirty = new Set(base.seen.dirty);
  const ignored = new Set(base.seen.ignored);
  for (const p of changed) {
    dirty.delete(p);
    ignored.delete(p);
  }
  // A tracked path that changed is dirty without asking: the engine then compares its bytes, so
  // an edit undone is still no change. Only the paths git does not track need git's ignore rules.
  const untracked: PathKey[] = [];
  for (const p of changed) {
    const i = findEntry(base.index, rel(p));
    if (i !== -1 && base.index.mode[i] !== IX_GITLINK) dirty.add(p);
    else untracked.push(p);
  }
  if (untracked.length > 0) {
    const only = untracked.map((p) => displayPath(rel(p)).path);
    const got = await traced('git status since', readStatus(area, config.pairs, timeoutMs, true, only));
    // A repository that appeared inside the area, or a folder git could not open: only a whole listing knows.
    if (got.unopened) throw new NotVouchedError('a folder git could not open');
    const nestedThen = new Set(base.seen.nested);
    if (got.nested.some((p) => !nestedThen.has(area.prefix + p))) throw new NotVouchedError('a new repository');
    for (const p of got.dirty) dirty.add(area.prefix + p);
    for (const p of got.ignored) ignored.add(area.prefix + p);
  }
  return {
    dirty: [...dirty].map(rel),
    nested: base.seen.nested.map(rel),
    ignored: [...ignored].map(rel),
    unopened: false,
  };
}

async function listArea(
  area: RepoArea,
  ctx: ListingContext,
  since?: { base: AreaState; changed: PathKey[] },
): Promise<{ state: AreaState; nested: PathKey[] }> {
  const config = await traced('config listing', listingConfig(area, ctx.timeoutMs, ctx.configCache));
  const base = since?.base;
  if (since && (!base?.seen || base.seen.config !== config)) throw new NotVouchedError('the git config');
  // An index git cannot simply read (a FIFO, a folder) would hold git status until its deadline.
  assertPlainIndex(area.gitDir);
  for (let attempt = 0; attempt < INDEX_ATTEMPTS; attempt++) {
    const before = indexIdentity(area.gitDir);
    const atCheckpoint = ctx.recentSinceSec === null;
    const asked =
      since && base?.seen
        ? statusSince(area, config, { ...base, seen: base.seen }, since.changed, ctx.timeoutMs)
        : traced('git status', readStatus(area, config.pairs, ctx.timeoutMs, atCheckpoint || ctx.keepSeen === true));
    let got: ReturnType<typeof indexOf>;
    try {
      got = indexOf(area, ctx.indexCache);
    } catch (err) {
      await asked.catch(() => undefined);
      throw err;
    }
    const status = await asked;
    // The status must describe the index that was parsed: both read the same index file.
    if (indexIdentity(area.gitDir) !== before || got.identity !== before) {
      if (since) throw new NotVouchedError('the index');
      continue;
    }
    // The paths outside `changed` are as git found them with the base's index: it must be that one.
    if (since && got.ix !== base?.index) throw new NotVouchedError('the index');
    const dirty = new Set<PathKey>();
    for (const p of status.dirty) dirty.add(area.prefix + p);
    // git status does not look at these: the engine reads them itself at both ends.
    for (const p of flaggedPaths(got.ix)) dirty.add(area.prefix + p);
    // A clean file whose bytes git converts (line endings, ident, ...) is not its blob: it is read
    // like a dirty one, so its start content is what was on disk.
    const untrackedAttributes = attributeFilesAmong(status.dirty);
    if (mayConvert(area, config, [...new Set([...trackedAttributeFiles(got.ix), ...untrackedAttributes])]))
      for (const p of await traced('size check', sizeMismatches(area, got.ix, ctx.timeoutMs))) {
        dirty.add(area.prefix + p);
      }
    // Nor can it tell an edit within the same second as the recorded time that kept the size:
    // at completion, entries recorded since shortly before the checkpoint are compared by content.
    const recent = new Set<PathKey>();
    if (ctx.recentSinceSec !== null)
      for (const p of recentPaths(got.ix, ctx.recentSinceSec)) {
        const k = area.prefix + p;
        if (dirty.has(k)) continue;
        dirty.add(k);
        recent.add(k);
      }
    const nested = [...status.nested];
    for (const p of gitlinkPaths(got.ix)) nested.push(p);
    const attributes =
      config.attributesFile ||
      tracksAttributes(got.ix) ||
      [...dirty].some((p) => p.endsWith('/.gitattributes') || p === area.prefix + '.gitattributes') ||
      [area.gitDir, area.commonDir].some((d) => fs.existsSync(path.join(d, 'info', 'attributes')));
    const ignored = new Set(status.ignored.map((p) => area.prefix + p));
    const state: AreaState = {
      area,
      index: got.ix,
      dirty,
      recent,
      attributes,
      unopened: status.unopened,
      ignored: atCheckpoint ? ignored : new Set(),
    };
    if (ctx.keepSeen === true)
      state.seen = {
        dirty: new Set(status.dirty.map((p) => area.prefix + p)),
        ignored,
        nested: status.nested.map((p) => area.prefix + p),
        config,
      };
    return { state, nested: nested.map((p) => area.prefix + p) };
  }
  throw new IndexUnstableError(`the index of ${area.cwd} kept changing while it was listed`);
}

function isFolder(root: string, rel: PathKey): boolean {
  try {
    return fs.lstatSync(path.join(root, Buffer.from(rel, 'latin1').toString())).isDirectory();
  } catch {
    return false;
  }
}

/**
 * True when the folder holds a `.git` (a folder, or the file a checked-out submodule has). A
 * submodule a clone did not check out is an empty folder without one: git lists nothing in it and
 * reports nothing written there, so it is a folder to skip, not a repository that failed.
 */
function hasGitEntry(root: string, rel: PathKey): boolean {
  try {
    fs.lstatSync(path.join(root, Buffer.from(rel, 'latin1').toString(), '.git'));
    return true;
  } catch {
    return false;
  }
}

/** Lists the workspace's repository and, level by level, the repositories nested in it. */
export async function listWorkspace(ctx: ListingContext): Promise<GitStatusListing> {
  return ctx.since ? listSince(ctx, ctx.since) : listWhole(ctx);
}

/** Each area of the base asked about its own changed paths only; no repository came or went. */
async function listSince(
  ctx: ListingContext,
  since: { base: GitStatusListing; changed: ReadonlySet<PathKey> },
): Promise<GitStatusListing> {
  const base = since.base;
  if (base.reasons.length > 0 || base.unlisted.length > 0) throw new NotVouchedError('a repository not listed');
  const byArea = new Map<AreaState, PathKey[]>(base.areas.map((a) => [a, []]));
  for (const p of since.changed) {
    const owner = ownerOf(base.areas, p);
    if (owner) byArea.get(owner)!.push(p);
  }
  const areas: AreaState[] = [];
  for (const a of base.areas) areas.push((await listArea(a.area, ctx, { base: a, changed: byArea.get(a)! })).state);
  return { rootArea: ctx.rootArea, areas, reasons: [], unlisted: [] };
}

async function listWhole(ctx: ListingContext): Promise<GitStatusListing> {
  const reasons: TruncatedReason[] = [];
  const unlisted: PathKey[] = [];
  const top = await listArea(ctx.rootArea, ctx);
  const areas: AreaState[] = [top.state];
  let pending = top.nested;
  for (let depth = 0; pending.length > 0; depth++) {
    const next: PathKey[] = [];
    for (const rel of pending) {
      if (depth >= MAX_NESTED_DEPTH || areas.length > MAX_NESTED_REPOS) {
        unlisted.push(rel);
        addReason(reasons, 'scan_files');
        continue;
      }
      // A submodule that is not checked out (no folder, or a folder without .git): nothing to list.
      if (!isFolder(ctx.root, rel) || !hasGitEntry(ctx.root, rel)) continue;
      try {
        const area = await nestedRepoArea(ctx.root, rel, ctx.timeoutMs);
        if (!area) {
          // Listed whole by git but not a repository's top level: git's answer cannot be read here.
          unlisted.push(rel);
          addReason(reasons, 'degraded');
          continue;
        }
        const got = await listArea(area, ctx);
        areas.push(got.state);
        next.push(...got.nested);
      } catch (err) {
        unlisted.push(rel);
        addReason(reasons, err instanceof IndexUnstableError ? 'degraded' : reasonFor(err));
      }
    }
    pending = next;
  }
  areas.sort((a, b) => b.area.prefix.length - a.area.prefix.length);
  return { rootArea: ctx.rootArea, areas, reasons, unlisted };
}

/** The area that owns `p` (the nested repository it lies in, else the workspace's). */
export function ownerOf(areas: readonly AreaState[], p: PathKey): AreaState | null {
  for (const a of areas) if (p.startsWith(a.area.prefix)) return a;
  return null;
}

/** True when `p` lies in a folder that could not be listed. */
export function inUnlisted(unlisted: readonly PathKey[], p: PathKey): boolean {
  for (const u of unlisted) if (p === u || p.startsWith(u + '/')) return true;
  return false;
}
