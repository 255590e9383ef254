import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { PathKey } from '../paths/index.ts';
import { DIR_FLAGS, HAS_PROC_FD } from './descriptors.ts';
import {
  openFolderInside,
  closeFolder,
  folderPlacedInside,
  placedInside,
  pathBelow,
  type FolderInside,
  type SafeRoot,
} from './safe-read.ts';

/**
 * The one way rundiff writes inside a workspace (undoing a run). Like the reads next door, nothing
 * is written by a name that was checked earlier: each folder on the way is opened without
 * following a symlink and checked to lie below the root on its descriptor, the next one is opened
 * through it (`/proc/self/fd/N/name`), and the file is written to a fresh temp file in its final
 * folder, flushed, given its mode and renamed over the name. A folder on the way that is a
 * symlink, or that the kernel places outside the root, refuses the write; the final name is
 * replaced, never followed (a symlink standing there is replaced by the file, its target untouched).
 * A root from `openRoot` is never named again: the first folder is its own descriptor, so a folder
 * above the workspace swapped for a symlink mid-revert cannot move the writes elsewhere. Replacing
 * by rename gives the path a new inode: the old file's permission bits and owner are carried over
 * (`keep`), but other hard links to it keep the old bytes.
 * Needs Linux's `/proc/self/fd`; elsewhere every write is refused with `unsupported`, unless the
 * caller is a command that does nothing else meanwhile and asks for `walk: 'cwd'`: the process's
 * working folder then walks down instead, each folder opened without following a link and
 * entered only when the folder entered is that same opened folder (device and inode), and the
 * file is written by its single name in it (see `walkDown`).
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
 * The file a write replaces (or, for a rename undone, the one it moves back from): its permission
 * bits and owner are carried over to the new file.
 */
export interface KeptAttributes {
  /** `st_mode & 0o7777`. */
  perm: number;
  uid: number;
  gid: number;
}

/**
 * What to leave at a path: a regular file with a git mode (`100644` / `100755`), or a symlink.
 * `keep`: the attributes of the file it replaces; without it (nothing stood there) the file gets
 * 0644 / 0755 less the umask and the server's owner. `perm`: exactly these permission bits
 * instead (a settings file the installer rewrites keeps its own `0600`).
 */
export type WriteEntry =
  | { kind: 'file'; bytes: Buffer; mode: string; keep?: KeptAttributes; perm?: number }
  | { kind: 'symlink'; target: Buffer };

export interface WriteOptions {
  /** The mode of folders created on the way (default 0o777, the umask applied). */
  folderMode?: number;
  /**
   * How folders are reached: `proc` (the default where `/proc/self/fd` exists) through each opened
   * folder's descriptor; `cwd` by moving the process's working folder down, checked at each step,
   * then back. `cwd` changes state the whole process shares, so it is only for a command that
   * runs nothing else at the same time (`rundiff hooks install`), never the server; it is what
   * such a command uses where there is no `/proc`.
   */
  walk?: 'proc' | 'cwd';
}

/**
 * The walk a command that runs nothing else meanwhile writes with: through descriptors where
 * `/proc/self/fd` exists, else by its working folder (see `WriteOptions.walk`).
 */
export const COMMAND_WALK: 'proc' | 'cwd' = HAS_PROC_FD ? 'proc' : 'cwd';

const TEMP_FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0);

const refuse = (reason: WriteRefusal, message: string): WriteResult => ({ ok: false, reason, message });

function errnoOf(err: unknown): { code: string | undefined; message: string } {
  const e = err as NodeJS.ErrnoException | null;
  return { code: e?.code, message: e?.message ?? String(err) };
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

/**
 * Opens the folder at `at` without following a symlink (creating it first when `create` and it is
 * missing): its descriptor, or why it cannot be a folder on the way.
 */
function openFolderAt(at: string | Buffer, create: boolean, folderMode: number): number | { refused: WriteResult } {
  try {
    return fs.openSync(at, DIR_FLAGS);
  } catch (err) {
    const { code, message } = errnoOf(err);
    if (code === 'ENOENT' && create) {
      try {
        fs.mkdirSync(at, { mode: folderMode });
      } catch (mkErr) {
        const m = errnoOf(mkErr);
        if (m.code !== 'EEXIST') return { refused: refuse('denied', m.message) };
      }
      return openFolderAt(at, false, folderMode);
    }
    // With O_DIRECTORY, Linux answers ENOTDIR (not ELOOP) for a symlink it will not follow.
    if (code === 'ELOOP' || (code === 'ENOTDIR' && isLink(at)))
      return { refused: refuse('outside_root', 'a folder on the way is a symbolic link') };
    if (code === 'ENOTDIR') return { refused: refuse('not_a_folder', 'a file stands where a folder is needed') };
    if (code === 'ENOENT') return { refused: refuse('not_a_folder', 'a folder on the way is missing') };
    return { refused: refuse('denied', message) };
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
  const fd = openFolderAt(pathBelow(parent.base, name), create, folderMode);
  if (typeof fd !== 'number') return fd;
  if (folderPlacedInside(root, fd)) return { fd, base: `/proc/self/fd/${fd}/` };
  fs.closeSync(fd);
  return { refused: refuse('outside_root', 'a folder on the way lies outside the workspace') };
}

const sameFile = (a: fs.Stats, b: fs.Stats) => a.dev === b.dev && a.ino === b.ino;

/**
 * Enters the folder `name` of the working folder (creating it when `create`): opened first
 * without following a link, then entered, and kept only when the folder entered is the one opened
 * (so a name swapped for a symlink in between is refused, not followed). Its descriptor and
 * `./` as the base its names resolve against.
 */
function enterChild(name: PathKey, create: boolean, folderMode = 0o777): FolderInside | { refused: WriteResult } {
  const rel = pathBelow('.', name);
  const fd = openFolderAt(rel, create, folderMode);
  if (typeof fd !== 'number') return fd;
  try {
    // A name that is not UTF-8 may decode to another folder's name: the check below refuses it then.
    process.chdir(typeof rel === 'string' ? rel : rel.toString('utf8'));
    if (sameFile(fs.statSync('.'), fs.fstatSync(fd))) return { fd, base: './' };
  } catch {
    // fall through: refused below
  }
  fs.closeSync(fd);
  return { refused: refuse('outside_root', 'a folder on the way was replaced while it was entered') };
}

/**
 * The folder that holds `key`, reached by moving the working folder down from the root (`walk:
 * 'cwd'`); `back` puts the working folder back where it was. The root itself is entered by its
 * path and kept only when the folder entered really is the root's real path.
 */
function walkDown(
  root: SafeRoot,
  key: PathKey,
  create: boolean,
  folderMode?: number,
): { folder: FolderInside; name: PathKey; back: () => void } | { refused: WriteResult } {
  const saved = process.cwd();
  const back = () => {
    try {
      process.chdir(saved);
    } catch {
      // the folder the command started in is gone: nothing to go back to
    }
  };
  let current: FolderInside;
  try {
    const fd = fs.openSync(root.root, DIR_FLAGS & ~(fs.constants.O_NOFOLLOW ?? 0));
    process.chdir(root.root);
    const here = fs.realpathSync('.');
    if (!sameFile(fs.statSync('.'), fs.fstatSync(fd)) || !placedInside(root, Buffer.from(here, 'utf8'))) {
      fs.closeSync(fd);
      back();
      return { refused: refuse('outside_root', 'the folder moved while it was entered') };
    }
    current = { fd, base: './' };
  } catch (err) {
    back();
    return { refused: refuse('denied', errnoOf(err).message) };
  }
  const { folders, name } = componentsOf(key);
  for (const part of folders) {
    const next = enterChild(part, create, folderMode);
    closeFolder(current);
    if ('refused' in next) {
      back();
      return next;
    }
    current = next;
  }
  return { folder: current, name, back };
}

/** Opens the folder that holds `key` (creating missing folders when `create`), checked folder by folder. */
function openParent(
  root: SafeRoot,
  key: PathKey,
  create: boolean,
  folderMode?: number,
  walk: 'proc' | 'cwd' = 'proc',
): { folder: FolderInside; name: PathKey; back?: () => void } | { refused: WriteResult } {
  if (!validKey(key)) return { refused: refuse('outside_root', 'the path does not name a file below the workspace') };
  if (walk === 'cwd') return walkDown(root, key, create, folderMode);
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

/**
 * The permission bits of the new file. Git records only the executable bit, so the bits of the
 * file being replaced are kept (a private 0600 file stays 0600) and only the executable bits follow
 * the mode being restored: added where the file is readable, or taken away. A file written where
 * nothing stood gets git's default, 0644 / 0755 less the umask. Set-id bits are never carried: the
 * new file may not keep the old owner.
 */
export function permissionsFor(gitMode: string, keep: KeptAttributes | undefined): number {
  const exec = gitMode === '100755';
  if (keep === undefined) return (exec ? 0o755 : 0o644) & ~process.umask();
  const perm = keep.perm & 0o777;
  if (!exec) return perm & ~0o111;
  return (perm & 0o111) !== 0 ? perm : perm | ((perm & 0o444) >> 2);
}

/**
 * Gives the new file the old one's owner where the system lets us: the whole owner (as root), or
 * only the group (a group the server's user belongs to); otherwise it stays the server's user's.
 */
function keepOwner(fd: number, keep: KeptAttributes): void {
  const st = fs.fstatSync(fd);
  if (st.uid === keep.uid && st.gid === keep.gid) return;
  try {
    fs.fchownSync(fd, keep.uid, keep.gid);
    return;
  } catch {
    // not permitted: try the group alone
  }
  if (st.gid === keep.gid) return;
  try {
    fs.fchownSync(fd, st.uid, keep.gid);
  } catch {
    // not permitted either: the file keeps the server's user and group
  }
}

/**
 * Leaves `entry` at `key` below the root, atomically: a reader sees the old entry or the new one,
 * never a part. Missing folders are created (inside the root only).
 */
export function writeInside(root: SafeRoot, key: PathKey, entry: WriteEntry, options: WriteOptions = {}): WriteResult {
  const opened = openParent(root, key, true, options.folderMode, options.walk);
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
        // Owner first: a change of owner clears permission bits set before it.
        if (entry.keep !== undefined) keepOwner(fd, entry.keep);
        fs.fchmodSync(fd, entry.perm ?? permissionsFor(entry.mode, entry.keep));
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
    opened.back?.();
  }
}

/** Removes the file or symlink at `key` below the root (never a folder); absent is fine. */
export function removeInside(root: SafeRoot, key: PathKey, options: Pick<WriteOptions, 'walk'> = {}): WriteResult {
  const opened = openParent(root, key, false, undefined, options.walk);
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
    opened.back?.();
  }
}

/**
 * Removes the folder at `key` if it is an empty folder (not a link): `removed` says whether it
 * went. An absent folder, or one that holds anything, is left as it is.
 */
export function removeEmptyFolderInside(
  root: SafeRoot,
  key: PathKey,
  options: Pick<WriteOptions, 'walk'> = {},
): { ok: true; removed: boolean } | WriteResult {
  const opened = openParent(root, key, false, undefined, options.walk);
  if ('refused' in opened)
    return opened.refused.ok === false && opened.refused.reason === 'not_a_folder'
      ? { ok: true, removed: false }
      : opened.refused;
  const { folder, name } = opened;
  try {
    const abs = pathBelow(folder.base, name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(abs);
    } catch {
      return { ok: true, removed: false };
    }
    if (!st.isDirectory()) return { ok: true, removed: false };
    try {
      fs.rmdirSync(abs);
    } catch (err) {
      const { code, message } = errnoOf(err);
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOENT') return { ok: true, removed: false };
      return refuse('denied', message);
    }
    fs.fsyncSync(folder.fd);
    return { ok: true, removed: true };
  } finally {
    closeFolder(folder);
    opened.back?.();
  }
}
