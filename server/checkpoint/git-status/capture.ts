import fs from 'node:fs';
import type { Limits, WorkspaceKind } from '../../../shared/index.ts';
import type { RepoInfo } from '../../git/index.ts';
import { withReachablePath } from '../../fs/index.ts';
import { keyFromText, type PathKey } from '../../paths/index.ts';
import {
  isSqliteSidecar,
  isWatchCookie,
  MODE_EXEC,
  MODE_FILE,
  MODE_LINK,
  type Scanner,
} from '../../workspace/index.ts';
import { findEntry } from './index-snapshot.ts';
import { UnopenedFoldersError, type ConfigCache, type IndexCache, type RepoArea } from './repository.ts';
import { RACY_MARGIN_MS, type Checkpoint, type FileTable } from '../model.ts';
import { addReason } from '../common/reasons.ts';
import { inUnlisted, listWorkspace, type GitStatusListing, type ListingContext } from './listing.ts';
import { readStartContents } from '../common/start-contents.ts';
import { span } from '../common/trace.ts';
import { createYielder } from '../common/yield.ts';

/**
 * A checkpoint of a git workspace by `git status`: one `git status` and the index listing (which is
 * shared while the index file does not change) tell which paths git cannot vouch for; only those
 * are stat'ed and read. A clean tracked file costs nothing here: its start content is its index
 * blob, and whether it changed is git's answer at completion.
 */

export interface GitStatusCaptureInput {
  root: string;
  kind: WorkspaceKind;
  repo: RepoInfo;
  ownFiles: PathKey[];
  limits: Readonly<Limits>;
  scanner: Scanner;
  gitTimeoutMs: number;
  indexCache: IndexCache;
  configCache: ConfigCache;
  reserveMemory(wanted: number): number;
  now(): number;
  reportFailure?: (what: string, err: unknown) => void;
  /** How the workspace is listed (a watcher may vouch for most of it). Default: the whole tree. */
  list?: (ctx: ListingContext) => Promise<GitStatusListing>;
}

/** Index entries stamped at or after this second cannot be told apart from an edit in the run. */
export function recentSince(checkpointMs: number): number {
  return Math.floor((checkpointMs - RACY_MARGIN_MS) / 1000);
}

/** The listing is over `maxScannedFiles`: not a failure, the walk's cut-scan rules apply instead. */
export class OverScanLimitError extends Error {}

/** The workspace's own repository area: its folder may lie below the repository's top level. */
export function rootAreaOf(root: string, repo: RepoInfo): RepoArea {
  const prefix = repo.prefix === '' ? '' : keyFromText(repo.prefix) + '/';
  return {
    prefix: '',
    cwd: root,
    gitDir: repo.gitDir,
    commonDir: repo.commonDir || repo.gitDir,
    workTree: repo.topLevel,
    topPrefix: prefix,
  };
}

/**
 * lstat columns of `keys`; a path that is gone (or a folder now) is left out. On the main thread
 * (git usually names few paths), giving the event loop a turn now and then when it names many.
 */
export async function statKeys(
  root: string,
  keys: readonly PathKey[],
  now: number,
): Promise<Pick<FileTable, 'paths' | 'size' | 'mtimeMs' | 'ctimeMs' | 'ino' | 'mode' | 'racy'>> {
  const rootBytes = Buffer.from(root.endsWith('/') ? root : root + '/');
  const paths: PathKey[] = [];
  const rows: { size: number; mtime: number; ctime: number; ino: number; mode: number }[] = [];
  const y = createYielder();
  for (const k of keys) {
    if (y.due()) await y.pause();
    let st: fs.Stats;
    try {
      // Metadata only: the bytes are read later through the safe reader, which refuses a path
      // that leads outside the root. A path too long for one call is measured through its folder.
      st = withReachablePath(Buffer.concat([rootBytes, Buffer.from(k, 'latin1')]), (p) => fs.lstatSync(p));
    } catch {
      continue;
    }
    let mode: number;
    if (st.isSymbolicLink()) mode = MODE_LINK;
    else if (st.isFile()) mode = st.mode & 0o100 ? MODE_EXEC : MODE_FILE;
    else continue;
    paths.push(k);
    rows.push({ size: st.size, mtime: st.mtimeMs, ctime: st.ctimeMs, ino: st.ino, mode });
  }
  const racyFrom = now - RACY_MARGIN_MS;
  return {
    paths,
    size: Float64Array.from(rows, (r) => r.size),
    mtimeMs: Float64Array.from(rows, (r) => r.mtime),
    ctimeMs: Float64Array.from(rows, (r) => r.ctime),
    ino: Float64Array.from(rows, (r) => r.ino),
    mode: Uint8Array.from(rows, (r) => r.mode),
    racy: Uint8Array.from(rows, (r) => (Math.max(r.mtime, r.ctime) >= racyFrom ? 1 : 0)),
  };
}

/**
 * Ignored files stat'ed at a checkpoint, at most (about 5 µs each). The rest, and files in folders
 * git ignored whole, are judged at completion by their times alone (`untouchedSince`).
 */
export const MAX_IGNORED_FILES = 20_000;

/** The ignored files of the listing (no folders), in folder order, at most `MAX_IGNORED_FILES`. */
export function ignoredFiles(listing: GitStatusListing, ownFiles: readonly PathKey[]): PathKey[] {
  const own = new Set(ownFiles);
  const out: PathKey[] = [];
  for (const a of listing.areas)
    for (const p of a.ignored) if (!p.endsWith('/') && !a.dirty.has(p) && reportable(p, own)) out.push(p);
  out.sort(byFolder);
  return out.slice(0, MAX_IGNORED_FILES);
}

/** The inode of each folder git ignored whole (key without its slash); one that is gone is left out. */
function ignoredFolderInodes(root: string, listing: GitStatusListing): Map<PathKey, number> {
  const out = new Map<PathKey, number>();
  const rootBytes = Buffer.from(root.endsWith('/') ? root : root + '/');
  for (const a of listing.areas)
    for (const p of a.ignored) {
      if (!p.endsWith('/')) continue;
      const k = p.slice(0, -1);
      try {
        const st = withReachablePath(Buffer.concat([rootBytes, Buffer.from(k, 'latin1')]), (q) => fs.lstatSync(q));
        if (st.isDirectory()) out.set(k, st.ino);
      } catch {
        // gone already: nothing is claimed about it
      }
    }
  return out;
}

/** The paths git could not vouch for at one end, in folder order, without the server's own files. */
export function dirtyPaths(listing: GitStatusListing, ownFiles: readonly PathKey[]): PathKey[] {
  const own = new Set(ownFiles);
  const out: PathKey[] = [];
  for (const a of listing.areas) for (const p of a.dirty) if (reportable(p, own)) out.push(p);
  out.sort(byFolder);
  return [...new Set(out)];
}

/** Neither the server's own database, a SQLite sidecar file nor a watcher's sync cookie (skipped in every workspace). */
export function reportable(p: PathKey, own: ReadonlySet<PathKey>): boolean {
  const name = p.slice(p.lastIndexOf('/') + 1);
  return !own.has(p) && !isSqliteSidecar(name) && !isWatchCookie(name);
}

/** Paths grouped folder by folder (the reader opens each folder once). */
export function byFolder(a: PathKey, b: PathKey): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Total entries git listed (index entries and dirty paths): the scanned-files figure of a git workspace. */
export function listedCount(listing: GitStatusListing): number {
  let n = 0;
  for (const a of listing.areas) {
    n += a.index.count;
    for (const p of a.dirty) if (findEntry(a.index, p.slice(a.area.prefix.length)) === -1) n++;
  }
  return n;
}

export async function captureByGitStatus(
  input: GitStatusCaptureInput,
): Promise<{ checkpoint: Checkpoint<GitStatusListing>; grantedBytes: number }> {
  const startedAt = input.now();
  const scanStartedAtMs = Date.now();
  const t0 = performance.now();
  const step = span();
  const listing = await (input.list ?? listWorkspace)({
    root: input.root,
    rootArea: rootAreaOf(input.root, input.repo),
    timeoutMs: input.gitTimeoutMs,
    indexCache: input.indexCache,
    configCache: input.configCache,
    recentSinceSec: null,
  });
  step('git status listing');
  // git listed nothing inside a folder whose path is too long for it: the walk takes the workspace
  // (it reaches such folders through descriptors) and records their files from the start.
  if (listing.areas.some((a) => a.unopened))
    throw new UnopenedFoldersError('git status skipped folders whose path is too long for one system call');
  if (listedCount(listing) > input.limits.maxScannedFiles) {
    // More files than a checkpoint may cover: the walk takes it, and says how far it got.
    throw new OverScanLimitError(`git lists more than ${input.limits.maxScannedFiles} files`);
  }
  const reasons = [...listing.reasons];
  const keys = dirtyPaths(listing, input.ownFiles).filter((p) => !inUnlisted(listing.unlisted, p));
  // What git ignores now is stat'ed too (not read): a run that un-ignores a file that did not change
  // then finds it as it was, not as a new file. Only a racy one (its times too close to now to vouch
  // for it) is read, so that an edit within the same tick is still found.
  const ignored = ignoredFiles(listing, input.ownFiles).filter((p) => !inUnlisted(listing.unlisted, p));
  const st = await statKeys(input.root, [...keys, ...ignored].sort(byFolder), scanStartedAtMs);
  const n = st.paths.length;
  const files: FileTable = {
    ...st,
    origin: new Uint8Array(n),
    lack: new Uint8Array(n),
    area: new Uint8Array(n),
    oids: new Uint8Array(n * 20),
    snapOffset: new Int32Array(n).fill(-1),
    snapLength: new Int32Array(n),
    binary: new Uint8Array(n),
  };
  const ignoredSet = new Set(ignored);
  const toRead = Array.from({ length: n }, (_, i) => i).filter((i) => !ignoredSet.has(st.paths[i]!) || st.racy[i]);
  const read = await readStartContents(files, toRead, input);
  listing.ignoredFolders = ignoredFolderInodes(input.root, listing);
  step('git status reads');
  if (read.memoryCapHit) addReason(reasons, 'memory_cap');
  if (read.readFailure !== null) addReason(reasons, read.readFailure);
  const checkpoint: Checkpoint<GitStatusListing> = {
    root: input.root,
    kind: input.kind,
    scanMode: 'git',
    scanStartedAtMs,
    startedAt,
    files,
    block: read.block,
    areas: listing.areas.map((a) => ({ prefix: a.area.prefix, cwd: a.area.cwd })),
    coverage: { complete: true, listed: new Set(), seen: new Set(), pruned: new Set() },
    ignore: { pruneDirs: [], skipFiles: [] },
    reasons,
    memoryBytes: read.block.byteLength,
    durationMs: performance.now() - t0,
    state: listing,
  };
  return { checkpoint, grantedBytes: read.granted };
}
