import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { runGit } from '../runner.ts';
import { keyToBytes, type PathKey } from '../../workspace/path-bytes.ts';
import { blobOid } from './new-file-patch.ts';

/**
 * Fingerprints the commit gate compares: HEAD plus a hash of the index entries (mode, object id,
 * stage, path; no stat data, so a mere index refresh is no change), and each file's work-tree
 * content as git would hash it with no filter.
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

export async function readRepoState(top: string): Promise<RepoState> {
  const [head, index] = await Promise.all([readHeadOid(top), runGit({ cwd: top, args: ['ls-files', '-s', '-z'] })]);
  return { head, indexHash: createHash('sha256').update(index.stdout).digest('hex') };
}

/** Files above this size are fingerprinted by stat data rather than read. */
const MAX_HASHED_BYTES = 64 * 1024 * 1024;

/** Absolute path bytes of a repository-relative path key (Buffer paths keep any name intact). */
export function absPath(top: string, key: PathKey): Buffer {
  return Buffer.concat([Buffer.from(top + '/', 'utf8'), keyToBytes(key)]);
}

/** The work-tree fingerprint of one file: its blob id, `absent`, or a stat signature for huge files and folders. */
export function worktreeFingerprint(top: string, key: PathKey, format: ObjectFormat): string {
  const abs = absPath(top, key);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(abs);
  } catch {
    return 'absent';
  }
  try {
    if (st.isSymbolicLink()) return blobOid(fs.readlinkSync(abs, { encoding: 'buffer' }), format);
    if (st.isFile() && st.size <= MAX_HASHED_BYTES) return blobOid(fs.readFileSync(abs), format);
  } catch {
    return 'unreadable';
  }
  return `stat:${st.mode}:${st.size}:${st.mtimeMs}:${st.ino}`;
}

export function worktreeFingerprints(top: string, keys: Iterable<PathKey>, format: ObjectFormat): Map<PathKey, string> {
  const out = new Map<PathKey, string>();
  for (const key of keys) if (!out.has(key)) out.set(key, worktreeFingerprint(top, key, format));
  return out;
}
