import { runGit, type GitConfigPair, type GitRunOptions } from './runner.ts';
import { keyFromBytes, splitNul, type PathKey } from '../paths/index.ts';
import { AppError } from '../errors.ts';

/**
 * Read-only repository queries used by tracking and the tools. None of these commands reads
 * working-tree content through git (so no clean filter or fsmonitor can run) and none writes `.git`:
 * `ls-files` reads the index, `check-attr` reads attributes, `cat-file --batch` reads objects.
 */

type Common = Pick<GitRunOptions, 'timeoutMs' | 'gitBinary' | 'env'>;

export interface RepoInfo {
  /** Real path of the work tree's top level. */
  topLevel: string;
  /** Absolute path of the git dir (for a linked worktree, its private git dir). */
  gitDir: string;
  /** Absolute path of the common git dir (objects, refs). */
  commonDir: string;
  /** Path of the folder asked about, relative to topLevel with `/` (empty = the top level). */
  prefix: string;
}

/** The repository containing `dir`, or null when `dir` is not inside a work tree. */
export async function findRepo(dir: string, opts: Common = {}): Promise<RepoInfo | null> {
  const res = await runGit({
    ...opts,
    cwd: dir,
    args: ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-dir', '--git-common-dir', '--show-prefix'],
    okExitCodes: [0, 128],
  });
  if (res.exitCode !== 0) {
    if (/not a git repository|must be run in a work tree|outside repository/i.test(res.stderr)) return null;
    if (/dubious ownership/i.test(res.stderr)) return null;
    throw new AppError('git_failed', 'git rev-parse failed', {
      details: { exit_code: res.exitCode, stderr: res.stderr.slice(-2000) },
    });
  }
  const lines = res.stdout.toString('utf8').split('\n');
  const [topLevel, gitDir, commonDir, prefix] = lines;
  if (!topLevel) return null; // inside .git itself
  return { topLevel, gitDir: gitDir ?? '', commonDir: commonDir ?? '', prefix: (prefix ?? '').replace(/\/$/, '') };
}

export interface IndexEntry {
  /** Path relative to the folder the query ran in. */
  path: PathKey;
  /** Octal mode as git prints it: 100644, 100755, 120000 (link), 160000 (gitlink). */
  mode: string;
  oid: string;
  /** 0 = merged; 1-3 = conflict stages. */
  stage: number;
  mtimeMs: number;
  /** mtime nanoseconds part as stored in the index. */
  mtimeNs: number;
  size: number;
  ino: number;
}

/**
 * Index entries under `cwd` (paths relative to it), with the stat data git stored for each.
 * `git ls-files --debug` prints that data without looking at the work tree.
 */
export async function listIndex(cwd: string, opts: Common = {}): Promise<IndexEntry[]> {
  const res = await runGit({ ...opts, cwd, args: ['ls-files', '-s', '--debug', '-z'] });
  return parseIndexDebug(res.stdout);
}

export function parseIndexDebug(buf: Buffer): IndexEntry[] {
  const entries: IndexEntry[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const nul = buf.indexOf(0, pos);
    if (nul === -1) break;
    const head = buf.subarray(pos, nul);
    const tab = head.indexOf(9);
    const meta = head.subarray(0, tab).toString('latin1').split(' ');
    const path = keyFromBytes(head.subarray(tab + 1));
    // Five "\n"-terminated debug lines follow the NUL.
    let p = nul + 1;
    const lines: string[] = [];
    for (let i = 0; i < 5; i++) {
      const nl = buf.indexOf(10, p);
      if (nl === -1) throw new AppError('git_failed', 'unexpected ls-files --debug output');
      lines.push(buf.subarray(p, nl).toString('latin1'));
      p = nl + 1;
    }
    pos = p;
    const num = (re: RegExp): number => {
      for (const l of lines) {
        const m = re.exec(l);
        if (m) return Number(m[1]);
      }
      return 0;
    };
    const mt = lines.map((l) => /mtime:\s*(\d+):(\d+)/.exec(l)).find((m) => m !== null);
    const sec = mt ? Number(mt[1]) : 0;
    const ns = mt ? Number(mt[2]) : 0;
    entries.push({
      path,
      mode: meta[0] ?? '',
      oid: meta[1] ?? '',
      stage: Number(meta[2] ?? 0),
      mtimeMs: sec * 1000 + Math.floor(ns / 1e6),
      mtimeNs: ns,
      size: num(/size:\s*(\d+)/),
      ino: num(/ino:\s*(\d+)/),
    });
  }
  return entries;
}

/** Untracked files that git does not ignore, one by one (new folders expanded), relative to `cwd`. */
export async function listUntracked(
  cwd: string,
  opts: Common & { config?: readonly GitConfigPair[] } = {},
): Promise<PathKey[]> {
  const res = await runGit({ ...opts, cwd, args: ['ls-files', '--others', '--exclude-standard', '-z'] });
  return splitNul(res.stdout).map(keyFromBytes);
}

export interface IgnoredListing {
  /** Ignored folders, relative to `cwd`, without the trailing `/`: a walk prunes these. */
  dirs: PathKey[];
  /** Ignored single files. */
  files: PathKey[];
}

/** What git ignores under `cwd`. Git never descends into an ignored folder, so this is cheap. */
export async function listIgnored(
  cwd: string,
  opts: Common & { config?: readonly GitConfigPair[] } = {},
): Promise<IgnoredListing> {
  const res = await runGit({
    ...opts,
    cwd,
    args: ['ls-files', '--others', '--ignored', '--exclude-standard', '--directory', '-z'],
  });
  const dirs: PathKey[] = [];
  const files: PathKey[] = [];
  for (const rec of splitNul(res.stdout)) {
    if (rec[rec.length - 1] === 0x2f) dirs.push(keyFromBytes(rec.subarray(0, rec.length - 1)));
    else files.push(keyFromBytes(rec));
  }
  return { dirs, files };
}

/**
 * The paths among `paths` (relative to `cwd`) that git's ignore rules exclude: `git check-ignore`,
 * which applies every rule git can read on the way to each path (a folder above it excluded
 * included) without opening the path itself. Tracked paths are never ignored.
 */
export async function checkIgnored(
  cwd: string,
  paths: readonly PathKey[],
  opts: Common & { config?: readonly GitConfigPair[] } = {},
): Promise<Set<PathKey>> {
  const out = new Set<PathKey>();
  if (paths.length === 0) return out;
  const input = Buffer.concat(paths.map((p) => Buffer.concat([Buffer.from(p, 'latin1'), Buffer.from([0])])));
  // Exit 1: none of them is ignored.
  const res = await runGit({ ...opts, cwd, args: ['check-ignore', '-z', '--stdin'], input, okExitCodes: [0, 1] });
  for (const rec of splitNul(res.stdout)) out.add(keyFromBytes(rec));
  return out;
}

/** Attribute values per path: `set`, `unset`, `unspecified` or the value text. */
export type AttrMap = Map<PathKey, Record<string, string>>;

/** `git check-attr` for many paths at once (reads .gitattributes; runs no driver). */
export async function checkAttrs(
  cwd: string,
  paths: readonly PathKey[],
  attrs: readonly string[],
  opts: Common = {},
): Promise<AttrMap> {
  const out: AttrMap = new Map();
  if (paths.length === 0) return out;
  const input = Buffer.concat(paths.map((p) => Buffer.concat([Buffer.from(p, 'latin1'), Buffer.from([0])])));
  const res = await runGit({ ...opts, cwd, args: ['check-attr', '-z', '--stdin', ...attrs], input });
  const recs = splitNulKeepEmpty(res.stdout);
  for (let i = 0; i + 2 < recs.length; i += 3) {
    const path = keyFromBytes(recs[i]!);
    const attr = recs[i + 1]!.toString('utf8');
    const value = recs[i + 2]!.toString('utf8');
    let entry = out.get(path);
    if (!entry) out.set(path, (entry = {}));
    entry[attr] = value;
  }
  return out;
}

function splitNulKeepEmpty(buf: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (;;) {
    const i = buf.indexOf(0, start);
    if (i === -1) return parts;
    parts.push(buf.subarray(start, i));
    start = i + 1;
  }
}

/** True when the attributes mark a file binary for diffs (`binary`, or `-diff`). */
export function isBinaryByAttrs(a: Record<string, string> | undefined): boolean {
  if (!a) return false;
  return a.binary === 'set' || a.diff === 'unset';
}

/** Reads many objects in one `git cat-file --batch` (no filters, no textconv). Missing ids are absent. */
export async function readBlobs(cwd: string, oids: readonly string[], opts: Common = {}): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const unique = [...new Set(oids)];
  if (unique.length === 0) return out;
  const res = await runGit({ ...opts, cwd, args: ['cat-file', '--batch'], input: unique.join('\n') + '\n' });
  const buf = res.stdout;
  let pos = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(10, pos);
    if (nl === -1) break;
    const header = buf.subarray(pos, nl).toString('latin1').split(' ');
    pos = nl + 1;
    if (header[1] === 'missing' || header.length < 3) continue;
    const size = Number(header[2]);
    out.set(header[0]!, buf.subarray(pos, pos + size));
    pos += size + 1;
  }
  return out;
}

export interface HeadState {
  /** Commit id of HEAD, or null in an empty repository. */
  head: string | null;
  /** Branch name, or null when detached. */
  branch: string | null;
  detached: boolean;
  unborn: boolean;
}

export async function readHead(cwd: string, opts: Common = {}): Promise<HeadState> {
  const sym = await runGit({ ...opts, cwd, args: ['symbolic-ref', '-q', 'HEAD'], okExitCodes: [0, 1] });
  const ref = sym.exitCode === 0 ? sym.stdout.toString('utf8').trim() : null;
  const rev = await runGit({
    ...opts,
    cwd,
    args: ['rev-parse', '-q', '--verify', 'HEAD^{commit}'],
    okExitCodes: [0, 1],
  });
  const head = rev.exitCode === 0 ? rev.stdout.toString('utf8').trim() : null;
  return {
    head,
    branch: ref ? ref.replace(/^refs\/heads\//, '') : null,
    detached: ref === null,
    unborn: head === null,
  };
}

/** A filter driver's name as bytes, shown for an error: text when it is UTF-8, else escaped bytes. */
function showName(bytes: Buffer): string {
  return [...bytes]
    .map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`))
    .join('');
}

/**
 * Overrides that neutralise every filter driver the repository's config defines, for the git tools
 * that must read the work tree through git (status, diff, commit). An empty command is "no filter"
 * to git, and `required=false` keeps a missing driver from failing the call.
 *
 * Names are taken as bytes from `git config --name-only -z`; the overrides travel to git as
 * key/value pairs in the environment, which can carry only text. A driver whose name is not valid
 * UTF-8 therefore cannot be switched off, and the call is refused rather than run with it live.
 */
export async function filterOverrides(
  cwd: string,
  opts: Common = {},
): Promise<{ config: GitConfigPair[]; drivers: string[] }> {
  const res = await runGit({ ...opts, cwd, args: ['config', '--name-only', '-z', '--list'], okExitCodes: [0, 1] });
  return filterOverridesFor(splitNul(res.stdout));
}

/** The overrides for the config keys `keys` (as bytes): every `filter.<name>.*` one switched off. */
export function filterOverridesFor(keys: readonly Buffer[]): { config: GitConfigPair[]; drivers: string[] } {
  const drivers = new Set<string>();
  const unusable: string[] = [];
  const prefix = Buffer.from('filter.', 'latin1');
  for (const rec of keys) {
    if (!rec.subarray(0, prefix.length).equals(prefix)) continue;
    const m = /^filter\.(.+)\.(clean|smudge|process|required)$/s.exec(rec.toString('latin1'));
    if (!m) continue;
    const bytes = Buffer.from(m[1]!, 'latin1');
    const text = bytes.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(bytes) || text.includes('\n')) unusable.push(showName(bytes));
    else drivers.add(text);
  }
  if (unusable.length > 0) {
    throw new AppError(
      'filter_required',
      `the repository configures a filter driver whose name cannot be switched off safely: ${unusable.join(', ')}`,
      {
        hint: 'Filter driver names must be valid UTF-8 for the git tools to disable them. Rename or remove that [filter] section in the repository config (git config --list shows it), or use git yourself.',
        details: { drivers: unusable },
      },
    );
  }
  const config: GitConfigPair[] = [];
  for (const d of drivers) {
    config.push(
      [`filter.${d}.clean`, ''],
      [`filter.${d}.smudge`, ''],
      [`filter.${d}.process`, ''],
      [`filter.${d}.required`, 'false'],
    );
  }
  return { config, drivers: [...drivers] };
}
