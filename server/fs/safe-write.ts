import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { PathKey } from '../paths/index.ts';
import { openFolderInside, closeFolder, pathBelow, type FolderInside, type SafeRoot } from './safe-read.ts';

/**
 * The one way rundiff writes inside a workspace (undoing a run). Like the reads next door, nothing
 * is written by a name that was checked earlier: each folder on the way is opened without
 * following a symlink and checked to lie below the root on its descriptor, the next one is opened
 * through it (`/proc/self/fd/N/name`), and the file is written to a fresh temp file in its final
 * folder, flushed, given its mode and renamed over the name. A folder on the way that is a
 * symlink, or that the kernel places outside the root, refuses the write; the final name is
 * replaced, never followed (a symlink standing there is replaced by the file, its target untouched).
 * Needs Linux's `/proc/self/fd`; elsewhere every write is refused with `unsupported`.
 */

export type WriteRefusal =
  /** A folder on the way is a symlink or lies outside the root. */
  | 'outside_root'
  /** Something other than a folder stands where a folder is needed, or a folder where a file goes. */
  | 'not_a_folder'
  /** The system refused (permission, disk full, I/O): `message` has its words. */
  | 'denied'
  /** No `/proc/self/fd` to write through safely. */
  | 'unsupported';

export type WriteResult = { ok: true } | { ok: false; reason: WriteRefusal; message: string };

/**
 * What to leave at a path: a regular file with a git mode (`100644` / `100755`, the umask applied)
 * or, with `perm`, exactly those permission bits (a settings file keeps its own `0600`); or a symlink.
 */
export type WriteEntry =
  { kind: 'file'; bytes: Buffer; mode: string; perm?: number } | { kind: 'symlink'; target: Buffer };

export interface WriteOptions {
  /** The mode of folders created on the way (default 0o777, the umask applied). */
  folderMode?: number;
}

const DIR_FLAGS =
  fs.constants.O_RDONLY |
  (fs.constants.O_DIRECTORY ?? 0) |
  (fs.constants.O_NOFOLLOW ?? 0) |
  (fs.constants.O_NOCTTY ?? 0);
const TEMP_FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0);

const refuse = (reason: WriteRefusal, message: string): WriteResult => ({ ok: false, reason, message });

function errnoOf(err: unknown): { code: string | undefined; message: string } {
  const e = err as NodeJS.ErrnoException | null;
  return { code: e?.code, message: e?.message ?? String(err) };
}

function startsWith(full: Buffer, prefix: Buffer): boolean {
  return full.length >= prefix.length && full.subarray(0, prefix.length).equals(prefix);
}

/** Splits a key into its folder components and its final name. */
function componentsOf(key: PathKey): { folders: PathKey[]; name: PathKey } {
  const parts = key.split('/');
  const name = parts.pop()!;
  return { folders: parts, name };
}

function validKey(key: PathKey): boolean {
  if (key === '' || key.startsWith('/')) return false;
  return key.split('/').every((p) => p !== '' && p !== '.' && p !== '..' && !p.includes('\0'));
}

function isLink(abs: string | Buffer): boolean {
  try {
    return fs.lstatSync(abs).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Opens `name` in `parent` as a folder below the root (creating it when `create`); null + why when it cannot. */
function openChild(
  root: SafeRoot,
  parent: FolderInside,
  name: PathKey,
  create: boolean,
  folderMode = 0o777,
): FolderInside | { refused: WriteResult } {
  const abs = pathBelow(parent.base, name);
  let fd: number;
  try {
    fd = fs.openSync(abs, DIR_FLAGS);
  } catch (err) {
    const { code, message } = errnoOf(err);
    if (code === 'ENOENT' && create) {
      try {
        fs.mkdirSync(abs, { mode: folderMode });
      } catch (mkErr) {
        const m = errnoOf(mkErr);
        if (m.code !== 'EEXIST') return { refused: refuse('denied', m.message) };
      }
      return openChild(root, parent, name, false, folderMode);
    }
    // With O_DIRECTORY, Linux answers ENOTDIR (not ELOOP) for a symlink it will not follow.
    if (code === 'ELOOP' || (code === 'ENOTDIR' && isLink(abs)))
      return { refused: refuse('outside_root', 'a folder on the way is a symbolic link') };
    if (code === 'ENOTDIR') return { refused: refuse('not_a_folder', 'a file stands where a folder is needed') };
    if (code === 'ENOENT') return { refused: refuse('not_a_folder', 'a folder on the way is missing') };
    return { refused: refuse('denied', message) };
  }
  try {
    const where = fs.readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' });
    if (startsWith(Buffer.concat([where, Buffer.from('/')]), root.realPrefix))
      return { fd, base: `/proc/self/fd/${fd}/` };
  } catch {
    // fall through: refused below
  }
  fs.closeSync(fd);
  return { refused: refuse('outside_root', 'a folder on the way lies outside the workspace') };
}

/** Opens the folder that holds `key` (creating missing folders when `create`), checked folder by folder. */
function openParent(
  root: SafeRoot,
  key: PathKey,
  create: boolean,
  folderMode?: number,
): { folder: FolderInside; name: PathKey } | { refused: WriteResult } {
  if (!validKey(key)) return { refused: refuse('outside_root', 'the path does not name a file below the workspace') };
  const top = openFolderInside(root, '');
  if (!top) return { refused: refuse('unsupported', 'writing safely needs /proc/self/fd (Linux)') };
  const { folders, name } = componentsOf(key);
  let current = top;
  for (const part of folders) {
    const next = openChild(root, current, part, create, folderMode);
    closeFolder(current);
    if ('refused' in next) return next;
    current = next;
  }
  return { folder: current, name };
}

const fileMode = (gitMode: string): number => (gitMode === '100755' ? 0o755 : 0o644);

/**
 * Leaves `entry` at `key` below the root, atomically: a reader sees the old entry or the new one,
 * never a part. Missing folders are created (inside the root only).
 */
export function writeInside(root: SafeRoot, key: PathKey, entry: WriteEntry, options: WriteOptions = {}): WriteResult {
  const opened = openParent(root, key, true, options.folderMode);
  if ('refused' in opened) return opened.refused;
  const { folder, name } = opened;
  const temp = `.rundiff-${randomBytes(6).toString('hex')}.tmp`;
  const tempAbs = folder.base + temp;
  try {
    try {
      const st = fs.lstatSync(pathBelow(folder.base, name));
      if (st.isDirectory()) return refuse('not_a_folder', 'a folder stands where the file goes');
    } catch {
      // absent: fine
    }
    if (entry.kind === 'symlink') {
      fs.symlinkSync(entry.target, tempAbs);
    } else {
      const fd = fs.openSync(tempAbs, TEMP_FLAGS, 0o600);
      try {
        let at = 0;
        while (at < entry.bytes.length) at += fs.writeSync(fd, entry.bytes, at, entry.bytes.length - at);
        fs.fchmodSync(fd, entry.perm ?? fileMode(entry.mode) & ~process.umask());
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
    fs.renameSync(tempAbs, pathBelow(folder.base, name));
    fs.fsyncSync(folder.fd);
    return { ok: true };
  } catch (err) {
    fs.rmSync(tempAbs, { force: true });
    return refuse('denied', errnoOf(err).message);
  } finally {
    closeFolder(folder);
  }
}

/** Removes the file or symlink at `key` below the root (never a folder); absent is fine. */
export function removeInside(root: SafeRoot, key: PathKey): WriteResult {
  const opened = openParent(root, key, false);
  if ('refused' in opened) {
    // A folder on the way that is missing means the file is gone already.
    if (
      opened.refused.ok === false &&
      opened.refused.reason === 'not_a_folder' &&
      /missing/.test(opened.refused.message)
    )
      return { ok: true };
    return opened.refused;
  }
  const { folder, name } = opened;
  try {
    const abs = pathBelow(folder.base, name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(abs);
    } catch {
      return { ok: true };
    }
    if (st.isDirectory()) return refuse('not_a_folder', 'a folder stands where the file was');
    fs.unlinkSync(abs);
    fs.fsyncSync(folder.fd);
    return { ok: true };
  } catch (err) {
    return refuse('denied', errnoOf(err).message);
  } finally {
    closeFolder(folder);
  }
}
