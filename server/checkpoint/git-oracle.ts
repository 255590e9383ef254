import fs from 'node:fs';
import path from 'node:path';
import { filterOverrides, findRepo, runGit, type GitConfigPair } from '../git/index.ts';
import type { PathKey } from '../paths/index.ts';
import { emptyIndex, parseIndexFile, UnreadableIndexError, type IndexSnapshot } from './index-snapshot.ts';
import { parseStatusV2, type StatusListing } from './status-listing.ts';

/**
 * git as the stat oracle of a git workspace: `git status` lstats every index entry (in parallel,
 * in C) and lists the untracked files, so the engine never walks the tree itself. Every call runs
 * with the runner's hardening plus the overrides below, so nothing the repository configured can
 * run or hide a change: no fsmonitor, no filter driver (each configured one is emptied), no
 * submodule recursion (a submodule is a repository of its own, asked separately under the same
 * rules), no `core.worktree` (the work tree is named explicitly), and no setting that makes git
 * trust stale stat data.
 */

/** One repository the workspace holds: the workspace itself (prefix '') or a nested one. */
export interface RepoArea {
  /** Workspace-relative key prefix of the area's folder ('' or `dir/`). */
  prefix: PathKey;
  /** Absolute folder git runs in. */
  cwd: string;
  gitDir: string;
  /** The repository's top level (an area's folder may lie below it). */
  workTree: string;
  /** The area's folder relative to the top level ('' or `dir/`): git prints status paths from the top. */
  topPrefix: PathKey;
}

const ORACLE_CONFIG: readonly GitConfigPair[] = Object.freeze([
  // Stale stat data must not pass for clean content.
  ['core.ignoreStat', 'false'],
  ['core.checkStat', 'default'],
  ['core.trustctime', 'true'],
  ['core.fileMode', 'true'],
  ['core.preloadIndex', 'true'],
  // One listing format, no rename pairing (it would read blobs), no submodule recursion.
  ['status.renames', 'false'],
  ['status.submoduleSummary', 'false'],
  ['status.showUntrackedFiles', 'all'],
  ['diff.ignoreSubmodules', 'all'],
  ['submodule.recurse', 'false'],
] as const);

/** The overrides for one repository: the oracle's own plus every filter driver it defines emptied. */
export async function oracleConfig(area: RepoArea, timeoutMs: number): Promise<GitConfigPair[]> {
  const filters = await filterOverrides(area.cwd, { timeoutMs, env: areaEnv(area) });
  return [...ORACLE_CONFIG, ...filters.config];
}

function areaEnv(area: RepoArea): Record<string, string> {
  // Named explicitly: a planted core.worktree must not point git at another folder.
  return { GIT_DIR: area.gitDir, GIT_WORK_TREE: area.workTree };
}

/** Bytes of `git status` output read at most (about 4 million paths): beyond, the listing is cut and says so. */
export const MAX_STATUS_BYTES = 256 * 1024 * 1024;

export class ListingTooLargeError extends Error {}

export async function readStatus(
  area: RepoArea,
  config: readonly GitConfigPair[],
  timeoutMs: number,
): Promise<StatusListing> {
  const res = await runGit({
    cwd: area.cwd,
    args: [
      'status',
      '--porcelain=v2',
      '-z',
      '--untracked-files=all',
      '--ignored=no',
      '--no-renames',
      '--ignore-submodules=all',
      '--',
      '.',
    ],
    env: areaEnv(area),
    config,
    timeoutMs,
    maxStdoutBytes: MAX_STATUS_BYTES,
  });
  if (res.stdoutTruncated) throw new ListingTooLargeError('git status listed more than the engine reads');
  return parseStatusV2(res.stdout, area.topPrefix);
}

/** Larger index files are not read here (about 4 million entries): the walk takes over. */
export const MAX_INDEX_BYTES = 512 * 1024 * 1024;

/** What identifies one written index file: git replaces the file (new inode) on every write. */
function identityOf(s: fs.BigIntStats): string {
  return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

export function indexIdentity(gitDir: string): string | null {
  try {
    return identityOf(fs.statSync(path.join(gitDir, 'index'), { bigint: true }));
  } catch {
    return null; // no index yet (a fresh repository)
  }
}

/**
 * Reads the index file once through one descriptor (its identity and its bytes are the same
 * file's, even if git replaces it meanwhile). Not followed if it is a link, never blocks on a FIFO.
 */
function readIndexFile(gitDir: string): { identity: string | null; bytes: Buffer | null } {
  let fd: number;
  try {
    fd = fs.openSync(
      path.join(gitDir, 'index'),
      fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY,
    );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { identity: null, bytes: null };
    throw new UnreadableIndexError(`the index cannot be opened: ${(err as Error).message}`);
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (!st.isFile()) throw new UnreadableIndexError('the index is not a regular file');
    if (st.size > BigInt(MAX_INDEX_BYTES)) throw new UnreadableIndexError('the index is larger than the engine reads');
    const size = Number(st.size);
    const bytes = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = fs.readSync(fd, bytes, got, size - got, got);
      if (n === 0) throw new UnreadableIndexError('the index changed while it was read');
      got += n;
    }
    return { identity: identityOf(st), bytes };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The last index listing per repository, reused while the index file is the same one: the
 * checkpoints of a run and of its tool calls share one snapshot (and its memory).
 */
export interface IndexCache {
  get(key: string, identity: string): IndexSnapshot | null;
  remember(key: string, identity: string, ix: IndexSnapshot): void;
  clear(): void;
}

/** Repositories whose last listing is kept. */
const INDEX_CACHE_REPOS = 16;

export function createIndexCache(): IndexCache {
  const last = new Map<string, { identity: string; ix: IndexSnapshot }>();
  return {
    get: (key, identity) => {
      const hit = last.get(key);
      return hit && hit.identity === identity ? hit.ix : null;
    },
    remember: (key, identity, ix) => {
      last.delete(key);
      last.set(key, { identity, ix });
      while (last.size > INDEX_CACHE_REPOS) last.delete(last.keys().next().value!);
    },
    clear: () => last.clear(),
  };
}

/**
 * The index of an area, parsed once per index file: from the cache when the file is the one
 * parsed last, else read now. `identity` is the file's that was used (null: there is none).
 */
export function indexOf(area: RepoArea, cache: IndexCache): { ix: IndexSnapshot; identity: string | null } {
  // Entries are kept relative to the area's folder: one listing per repository and folder.
  const key = `${area.gitDir}\0${area.topPrefix}`;
  const seen = indexIdentity(area.gitDir);
  if (seen !== null) {
    const hit = cache.get(key, seen);
    if (hit) return { ix: hit, identity: seen };
  }
  const file = readIndexFile(area.gitDir);
  if (file.bytes === null || file.identity === null) return { ix: emptyIndex(), identity: null };
  const ix = parseIndexFile(file.bytes, area.topPrefix);
  cache.remember(key, file.identity, ix);
  return { ix, identity: file.identity };
}

/** A folder git lists whole (or a submodule's): an area of its own when it is the top level of a repository. */
export async function nestedRepoArea(root: string, rel: PathKey, timeoutMs: number): Promise<RepoArea | null> {
  const cwd = path.join(root, Buffer.from(rel, 'latin1').toString());
  const info = await findRepo(cwd, { timeoutMs });
  if (!info) return null;
  let real: string;
  try {
    real = fs.realpathSync(cwd);
  } catch {
    return null;
  }
  if (info.topLevel !== real) return null;
  return { prefix: rel + '/', cwd, gitDir: info.gitDir, workTree: info.topLevel, topPrefix: '' };
}
