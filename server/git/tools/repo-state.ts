import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { runGit, type GitConfigPair } from '../runner.ts';
import { keyFromBytes, splitNul, type PathKey } from '../../paths/index.ts';
import { openInside, readFdExact, readLinkInside, safeRoot, type SafeRoot } from '../../fs/index.ts';
import { blobOid } from './new-file-patch.ts';

/**
 * Fingerprints the commit gate compares: HEAD plus a hash of the index entries (mode, object id,
 * stage, path; no stat data, so a mere index refresh is no change), and each file's work-tree
 * mode and content as git would hash it with no filter.
 */

export interface RepoState {
  head: string | null;
  indexHash: string;
}

export type ObjectFormat = 'sha1' | 'sha256';

const formats = new Map<string, ObjectFormat>();

export async function objectFormat(top: string): Promise<ObjectFormat> {
  const known = formats.get(top);
  if (known) return known;
  const res = await runGit({ cwd: top, args: ['rev-parse', '--show-object-format'] });
  const format: ObjectFormat = res.stdout.toString('utf8').trim() === 'sha256' ? 'sha256' : 'sha1';
  formats.set(top, format);
  return format;
}

export async function readHeadOid(top: string): Promise<string | null> {
  const res = await runGit({
    cwd: top,
    args: ['rev-parse', '-q', '--verify', 'HEAD^{commit}'],
    okExitCodes: [0, 1, 128],
  });
  return res.exitCode === 0 ? res.stdout.toString('utf8').trim() : null;
}

/** HEAD and the index hash; `env` may name another index file (GIT_INDEX_FILE). */
export async function readRepoState(top: string, env: Readonly<Record<string, string>> = {}): Promise<RepoState> {
  const [head, index] = await Promise.all([
    readHeadOid(top),
    runGit({ cwd: top, args: ['ls-files', '-s', '-z'], env }),
  ]);
  return { head, indexHash: createHash('sha256').update(index.stdout).digest('hex') };
}

/** Files above this size are fingerprinted by stat data rather than read. */
const MAX_HASHED_BYTES = 64 * 1024 * 1024;

/**
 * How git turns a regular file's permission bits into its mode. With `core.fileMode=false` (file
 * systems without a usable execute bit) git ignores the bit: a tracked file keeps its index mode
 * and a new file is 100644. The gate and the commit follow the same rule, so a mode is never
 * reported, compared or committed differently from what git itself would do.
 */
export interface ModeRule {
  trustExecBit: boolean;
  /** Index modes of regular files, consulted only when the bit is not trusted. */
  indexModes: ReadonlyMap<PathKey, string>;
}

export const TRUST_EXEC_BIT: ModeRule = { trustExecBit: true, indexModes: new Map() };

export async function readModeRule(top: string, config: readonly GitConfigPair[]): Promise<ModeRule> {
  const res = await runGit({
    cwd: top,
    args: ['config', '--type=bool', '--get', 'core.filemode'],
    config,
    okExitCodes: [0, 1],
  });
  if (res.exitCode !== 0 || res.stdout.toString('latin1').trim() !== 'false') return TRUST_EXEC_BIT;
  const index = await runGit({ cwd: top, args: ['ls-files', '-s', '-z'], config });
  const indexModes = new Map<PathKey, string>();
  for (const rec of splitNul(index.stdout)) {
    const tab = rec.indexOf(9);
    const mode = rec.subarray(0, 6).toString('latin1');
    if (mode === '100644' || mode === '100755') indexModes.set(keyFromBytes(rec.subarray(tab + 1)), mode);
  }
  return { trustExecBit: false, indexModes };
}

/** git's mode for a regular file: only the owner's execute bit counts (when git trusts it). */
export function gitFileMode(mode: number, key?: PathKey, rule: ModeRule = TRUST_EXEC_BIT): '100755' | '100644' {
  if (!rule.trustExecBit) return key !== undefined && rule.indexModes.get(key) === '100755' ? '100755' : '100644';
  return mode & 0o100 ? '100755' : '100644';
}

/** One work-tree entry as the commit gate sees it. */
export interface WorktreeEntry {
  /**
   * `<mode> <blob id>` of the bytes read, `absent`, `unreadable:<why>`, or a stat signature for a
   * file too large to hash. Equal fingerprints mean equal content and mode.
   */
  fingerprint: string;
  /** The bytes behind the fingerprint (a file's content, a link's target), when it names a blob. */
  bytes: Buffer | null;
  mode: string | null;
}

/**
 * Reads one work-tree entry through the workspace's safe read: never following a symlink, never
 * blocking on a FIFO, never leaving the top level. The fingerprint is computed from the very bytes
 * returned, so a caller that stages them stages exactly what was compared.
 */
export function readWorktreeEntry(
  root: SafeRoot,
  key: PathKey,
  format: ObjectFormat,
  rule: ModeRule = TRUST_EXEC_BIT,
): WorktreeEntry {
  const opened = openInside(root, key);
  if (opened.kind === 'absent') return { fingerprint: 'absent', bytes: null, mode: null };
  if (opened.kind === 'unreadable') return { fingerprint: `unreadable:${opened.reason}`, bytes: null, mode: null };
  if (opened.kind === 'symlink') {
    const link = readLinkInside(root, key);
    if (link.kind === 'symlink')
      return { fingerprint: `120000 ${blobOid(link.target, format)}`, bytes: link.target, mode: '120000' };
    if (link.kind === 'absent') return { fingerprint: 'absent', bytes: null, mode: null };
    return {
      fingerprint: `unreadable:${link.kind === 'unreadable' ? link.reason : 'changing'}`,
      bytes: null,
      mode: null,
    };
  }
  const { fd, stat } = opened;
  try {
    const mode = gitFileMode(stat.mode, key, rule);
    if (stat.size > MAX_HASHED_BYTES) {
      return { fingerprint: `stat:${stat.mode}:${stat.size}:${stat.mtimeMs}:${stat.ino}`, bytes: null, mode };
    }
    const buf = Buffer.allocUnsafe(stat.size + 1);
    if (!readFdExact(fd, buf, 0, stat.size)) return { fingerprint: 'unreadable:changing', bytes: null, mode: null };
    const bytes = buf.subarray(0, stat.size);
    return { fingerprint: `${mode} ${blobOid(bytes, format)}`, bytes, mode };
  } catch {
    return { fingerprint: 'unreadable:denied', bytes: null, mode: null };
  } finally {
    fs.closeSync(fd);
  }
}

/** The work-tree fingerprint of one file (see `readWorktreeEntry`). */
export function worktreeFingerprint(top: string, key: PathKey, format: ObjectFormat, rule?: ModeRule): string {
  return readWorktreeEntry(safeRoot(top), key, format, rule).fingerprint;
}
