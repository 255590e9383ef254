import fs from 'node:fs';
import path from 'node:path';
import { filterOverridesFor, runGit, type GitConfigPair } from '../../git/index.ts';
import { MAX_SYSCALL_PATH_BYTES } from '../../fs/index.ts';
import { nestedArea } from '../common/nested-repo.ts';
import { splitNul, type PathKey } from '../../paths/index.ts';
import { emptyIndex, parseIndexFile, UnreadableIndexError, type IndexSnapshot } from './index-snapshot.ts';
import { parseStatusV2, type StatusListing } from './status-listing.ts';

/**
 * git status as the stat source of a git workspace: `git status` lstats every index entry (in parallel,
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
  /** The shared git dir (differs from `gitDir` in a linked worktree): its config applies too. */
  commonDir: string;
  /** The repository's top level (an area's folder may lie below it). */
  workTree: string;
  /** The area's folder relative to the top level ('' or `dir/`): git prints status paths from the top. */
  topPrefix: PathKey;
}

const LISTING_OVERRIDES: readonly GitConfigPair[] = Object.freeze([
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

/** The overrides of a repository, kept while none of the files its config was read from changed. */
export interface ConfigCache {
  get(gitDir: string): { files: string[]; identities: string[]; config: ListingConfig } | undefined;
  set(gitDir: string, entry: { files: string[]; identities: string[]; config: ListingConfig }): void;
  clear(): void;
}

/** What a repository's config means for the listing. */
export interface ListingConfig {
  /** The overrides every call of the listing passes. */
  pairs: GitConfigPair[];
  /** `core.attributesFile` is set: paths may have attributes from it. */
  attributesFile: boolean;
  /**
   * The config alone can make a file's work-tree bytes differ from its blob (`core.autocrlf` true
   * or input, `core.eol`, any `filter.*` setting).
   */
  converts: boolean;
  /** Files outside the work tree git reads attributes from (`core.attributesFile`, else the user default). */
  attributeFiles: string[];
}

export function createConfigCache(): ConfigCache {
  const byDir = new Map<string, { files: string[]; identities: string[]; config: ListingConfig }>();
  return {
    get: (d) => byDir.get(d),
    set: (d, e) => {
      byDir.delete(d);
      byDir.set(d, e);
      while (byDir.size > INDEX_CACHE_REPOS) byDir.delete(byDir.keys().next().value!);
    },
    clear: () => byDir.clear(),
  };
}

function fileIdentity(file: string): string {
  try {
    return identityOf(fs.statSync(file, { bigint: true }));
  } catch {
    return 'absent';
  }
}

/**
 * The overrides for one repository: the listing's own plus every filter driver its config defines
 * emptied. Listing the config is a git call of its own before every listing, so the answer is
 * kept while every file it came from (and every file it includes, and HEAD, which conditional
 * includes may depend on) is the same file: a filter added meanwhile is seen at the next listing.
 */
export async function listingConfig(area: RepoArea, timeoutMs: number, cache?: ConfigCache): Promise<ListingConfig> {
  const hit = cache?.get(area.gitDir);
  if (hit && hit.files.every((f, i) => fileIdentity(f) === hit.identities[i])) return hit.config;
  const res = await runGit({
    cwd: area.cwd,
    args: ['config', '--list', '--show-origin', '-z'],
    env: areaEnv(area),
    timeoutMs,
    okExitCodes: [0, 1],
  });
  const keys: Buffer[] = [];
  let attributesFile = false;
  let converts = false;
  let autocrlf = false;
  const home = process.env.HOME ?? '';
  const xdg = process.env.XDG_CONFIG_HOME || (home ? path.join(home, '.config') : '');
  let attributeFiles: string[] = xdg ? [path.join(xdg, 'git', 'attributes')] : [];
  const files = new Set<string>(baseConfigFiles(area));
  const recs = splitNul(res.stdout);
  for (let i = 0; i + 1 < recs.length; i += 2) {
    const origin = recs[i]!.toString('utf8');
    const rec = recs[i + 1]!;
    const nl = rec.indexOf(10);
    const key = nl === -1 ? rec : rec.subarray(0, nl);
    keys.push(key);
    if (!origin.startsWith('file:')) continue;
    const from = path.resolve(area.cwd, origin.slice('file:'.length));
    files.add(from);
    const name = key.toString('latin1').toLowerCase();
    const value = nl === -1 ? '' : rec.subarray(nl + 1).toString('utf8');
    if (name === 'core.attributesfile') {
      attributesFile = true;
      attributeFiles = value
        ? [value.startsWith('~/') ? path.join(home, value.slice(2)) : path.resolve(area.cwd, value)]
        : [];
    }
    if (name.startsWith('filter.') || name === 'core.eol') converts = true;
    // The last setting wins; a key without a value is true.
    if (name === 'core.autocrlf')
      autocrlf = nl === -1 || !['false', 'no', 'off', '0', ''].includes(value.toLowerCase());
    if (nl !== -1 && (name === 'include.path' || (name.startsWith('includeif.') && name.endsWith('.path')))) {
      files.add(value.startsWith('~/') ? path.join(home, value.slice(2)) : path.resolve(path.dirname(from), value));
    }
  }
  const config = {
    pairs: [...LISTING_OVERRIDES, ...filterOverridesFor(keys).config],
    attributesFile,
    converts: converts || autocrlf,
    attributeFiles,
  };
  const list = [...files];
  cache?.set(area.gitDir, { files: list, identities: list.map(fileIdentity), config });
  return config;
}

/** Files a repository's config can come from whether or not they exist now. */
function baseConfigFiles(area: RepoArea): string[] {
  const dirs = [...new Set([area.gitDir, area.commonDir])];
  return [
    ...dirs.flatMap((d) => [path.join(d, 'config'), path.join(d, 'config.worktree')]),
    path.join(area.gitDir, 'HEAD'),
  ];
}

export function areaEnv(area: RepoArea): Record<string, string> {
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
  ignored = false,
  /** Only these paths (area-relative, literal), instead of the whole area. */
  only: readonly string[] | null = null,
): Promise<StatusListing & { unopened: boolean }> {
  const res = await runGit({
    cwd: area.cwd,
    args: [
      'status',
      '--porcelain=v2',
      '-z',
      '--untracked-files=all',
      // `matching` names an ignored folder once, without looking inside it (node_modules costs nothing).
      ignored ? '--ignored=matching' : '--ignored=no',
      '--no-renames',
      '--ignore-submodules=all',
      '--',
      ...(only ?? ['.']),
    ],
    // Each path is a name, never a pattern (`*`, `?`, `[` and `:` mean themselves).
    env: only ? { ...areaEnv(area), GIT_LITERAL_PATHSPECS: '1' } : areaEnv(area),
    config,
    timeoutMs,
    maxStdoutBytes: MAX_STATUS_BYTES,
  });
  if (res.stdoutTruncated) throw new ListingTooLargeError('git status listed more than the engine reads');
  // git skips a folder whose path is too long for one system call with only a warning (exit 0,
  // nothing listed inside); the warning itself is cut near 4 KB, so it cannot name the folder.
  const unopened =
    /could not open directory/.test(res.stderr) &&
    /File name too long|could not open directory '[^\n]{3000}/.test(res.stderr);
  return { ...parseStatusV2(res.stdout, area.topPrefix), unopened };
}

/** git status could not open a folder (path too long): its answer leaves files out. */
export class UnopenedFoldersError extends Error {}

/**
 * git cannot open a folder whose path from the top level is this many bytes or more: it names the
 * folder with a trailing `/`, which with the NUL passes the system's limit (Linux: 4,096 bytes).
 */
export const GIT_UNOPENED_FOLDER_BYTES = MAX_SYSCALL_PATH_BYTES;

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

/** Throws unless the index is absent or a regular file (checked before git is asked anything). */
export function assertPlainIndex(gitDir: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(path.join(gitDir, 'index'));
  } catch {
    return;
  }
  if (!st.isFile()) throw new UnreadableIndexError('the index is not a regular file');
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
/** Bytes of parsed indexes the cache keeps at most (a 500,000-file index parses to ~27 MiB). */
export const INDEX_CACHE_MAX_BYTES = 64 * 1024 * 1024;

export function createIndexCache(maxBytes = INDEX_CACHE_MAX_BYTES): IndexCache & { heldBytes(): number } {
  const last = new Map<string, { identity: string; ix: IndexSnapshot }>();
  let held = 0;
  const drop = (key: string) => {
    const old = last.get(key);
    if (old) held -= old.ix.bytes;
    last.delete(key);
  };
  return {
    get: (key, identity) => {
      const hit = last.get(key);
      return hit && hit.identity === identity ? hit.ix : null;
    },
    remember: (key, identity, ix) => {
      drop(key);
      last.set(key, { identity, ix });
      held += ix.bytes;
      // Oldest first, but never the one just parsed: live checkpoints keep theirs by reference.
      while (last.size > 1 && (last.size > INDEX_CACHE_REPOS || held > maxBytes)) drop(last.keys().next().value!);
    },
    clear: () => {
      last.clear();
      held = 0;
    },
    heldBytes: () => held,
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
  const found = await nestedArea(root, rel, timeoutMs);
  if (!found) return null;
  const { repo } = found;
  return {
    prefix: found.area.prefix,
    cwd: found.area.cwd,
    gitDir: repo.gitDir,
    commonDir: repo.commonDir || repo.gitDir,
    workTree: repo.topLevel,
    topPrefix: '',
  };
}
