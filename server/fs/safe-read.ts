import fs from 'node:fs';
import { keyToBytes, type PathKey } from '../paths/index.ts';
import { DIR_FLAGS, HAS_PROC_FD, realPrefixOf } from './descriptors.ts';
import { isLongPath, openLongFolder, throughFolder } from './long-path.ts';

/**
 * The one way rundiff reads a file inside a workspace (engine, snapshots, git tools, reverts).
 * Checking a path and then reading it by name is a race: between the two, a process in the
 * workspace can swap the file for a symlink pointing outside the root, or for a FIFO that blocks
 * the reader until someone writes to it. So a read here opens first, without following a final
 * symlink and without blocking, then checks what it opened (a regular file, really below the
 * root) and reads only from that descriptor. Nothing is read by name after a check.
 *
 * A directory above the file that was swapped for a symlink is caught by the containment check:
 * on Linux the kernel names the opened file in `/proc/self/fd/N`; elsewhere the real path of the
 * name must lead to the same inode as the descriptor.
 */

const OPEN_FLAGS =
  fs.constants.O_RDONLY |
  (fs.constants.O_NOFOLLOW ?? 0) |
  (fs.constants.O_NONBLOCK ?? 0) |
  (fs.constants.O_NOCTTY ?? 0);

/** Why a workspace entry could not be read as a file. */
export type UnreadableReason =
  /** Permission denied, an I/O error, or a name too long for the system. */
  | 'denied'
  /** A FIFO, socket, device or folder stands where a file was expected. */
  | 'not_regular'
  /** The opened file lies outside the root (a folder on its path was swapped for a symlink). */
  | 'outside_root'
  /** It changed size while it was read. */
  | 'changing';

export type OpenResult =
  | { kind: 'file'; fd: number; stat: fs.Stats }
  | { kind: 'symlink' }
  | { kind: 'absent' }
  | { kind: 'unreadable'; reason: UnreadableReason; code?: string };

export type EntryRead =
  /** `mode` is the whole `st_mode`; `uid` / `gid` its owner (a revert keeps them). */
  | { kind: 'file'; bytes: Buffer; mode: number; uid: number; gid: number }
  | { kind: 'symlink'; target: Buffer }
  | { kind: 'absent' }
  | { kind: 'too_large'; size: number; mode: number }
  | { kind: 'unreadable'; reason: UnreadableReason; code?: string };

/** A workspace root, resolved once: the real path that every opened file must lie below. */
export interface SafeRoot {
  /** The root as given (its real path for a root from `openRoot`). */
  root: string;
  /** Its real path with a trailing `/`, as bytes. */
  realPrefix: Buffer;
  /**
   * Set by `openRoot`: the root's own descriptor. Every path is then reached through it
   * (`/proc/self/fd/N/...`), never by the root's name again, and what is opened must lie below
   * where the kernel places that descriptor now.
   */
  fd?: number;
}

export function safeRoot(root: string): SafeRoot {
  const real = fs.realpathSync(root);
  return { root, realPrefix: realPrefixOf(real) };
}

/**
 * Opens the folder at `real` (a workspace's real path, already checked and allowed) once, and
 * keeps it only when the kernel places the opened folder exactly there: a folder above it swapped
 * for a symlink between the check and this open leads elsewhere and gives null, as does a folder
 * that is gone, or a system without `/proc/self/fd`. Everything read or written through the
 * answer goes through this one descriptor, so a later swap above the root cannot redirect it.
 * Close it with `closeRoot`.
 */
export function openRoot(real: string): SafeRoot | null {
  if (!HAS_PROC_FD) return null;
  let fd: number;
  try {
    fd = fs.openSync(real, DIR_FLAGS);
  } catch {
    return null;
  }
  try {
    const where = fs.readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' });
    if (where.equals(Buffer.from(real, 'utf8'))) return { root: real, realPrefix: realPrefixOf(real), fd };
  } catch {
    // fall through: not usable
  }
  fs.closeSync(fd);
  return null;
}

/**
 * True when the name of a root from `openRoot` still leads to the folder held open: the kernel
 * places the descriptor at that name, and the name (links followed) is that same folder. What
 * works by the root's name (git, a checkpoint) can check with this that it saw the folder the
 * descriptor writes to; false for a root not held open.
 */
export function namesRoot(root: SafeRoot): boolean {
  if (root.fd === undefined) return false;
  try {
    const where = fs.readlinkSync(`/proc/self/fd/${root.fd}`, { encoding: 'buffer' });
    if (!where.equals(Buffer.from(root.root, 'utf8'))) return false;
    const held = fs.fstatSync(root.fd);
    const named = fs.statSync(root.root);
    return held.dev === named.dev && held.ino === named.ino;
  } catch {
    return false;
  }
}

export function closeRoot(root: SafeRoot): void {
  if (root.fd !== undefined) fs.closeSync(root.fd);
}

/** Where paths below the root are joined on: its descriptor when it has one, else its name. */
const baseOf = (root: SafeRoot): string => (root.fd !== undefined ? `/proc/self/fd/${root.fd}/` : root.root);

/**
 * The prefix an opened file's real path must start with: for a root held open, where the kernel
 * places its descriptor now (the root itself may have been moved, which leaves it the root).
 */
function prefixOf(root: SafeRoot): Buffer {
  if (root.fd === undefined) return root.realPrefix;
  const where = fs.readlinkSync(`/proc/self/fd/${root.fd}`, { encoding: 'buffer' });
  return Buffer.concat([where, Buffer.from('/')]);
}

/** True when `where` (a real path, no trailing `/`) is the root or below it. */
export function placedInside(root: SafeRoot, where: Buffer): boolean {
  return startsWith(Buffer.concat([where, Buffer.from('/')]), prefixOf(root));
}

const NON_ASCII = /[\u0080-\uffff]/;

/** The absolute path of a path key below `root` (text when ASCII, exact bytes otherwise). */
export function pathBelow(root: string, key: PathKey): string | Buffer {
  const prefix = root.endsWith('/') ? root : root + '/';
  return NON_ASCII.test(key) ? Buffer.concat([Buffer.from(prefix, 'utf8'), keyToBytes(key)]) : prefix + key;
}

function startsWith(full: Buffer, prefix: Buffer): boolean {
  return full.length >= prefix.length && full.subarray(0, prefix.length).equals(prefix);
}

/** True when the open descriptor `fd` (opened as `abs`) is a file below the root. */
function openedInside(root: SafeRoot, fd: number, abs: string | Buffer, stat: fs.Stats): boolean {
  if (HAS_PROC_FD) {
    const where = fs.readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' });
    return startsWith(where, prefixOf(root));
  }
  try {
    const real = fs.realpathSync(abs, { encoding: 'buffer' });
    if (!startsWith(real, root.realPrefix)) return false;
    const again = fs.lstatSync(real);
    return again.ino === stat.ino && again.dev === stat.dev;
  } catch {
    return false;
  }
}

function errnoCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

/**
 * Opens a workspace file for reading. The caller owns `fd` when `kind` is `file` and must close it.
 * `symlink` means the final name is a symbolic link (never followed; read its text with
 * `readLinkInside`).
 */
export function openInside(root: SafeRoot, key: PathKey): OpenResult {
  const abs = pathBelow(baseOf(root), key);
  if (isLongPath(abs) || deepBelow(root, key)) {
    // Too long for one call, or for the kernel to name the opened file: reached a folder at a
    // time below a leading folder checked to lie inside the root, never through a link.
    try {
      return throughFolder(abs, (p) => openChecked(p, null), folderFdInside(root));
    } catch (err) {
      return longPathFailure(err);
    }
  }
  return openChecked(abs, (fd, stat) => openedInside(root, fd, abs, stat));
}

/**
 * True when a root held open is named short (`/proc/self/fd/N/key`) but `key`'s real path is too
 * long for the kernel to name: what is opened there cannot be placed by its own descriptor.
 */
function deepBelow(root: SafeRoot, key: PathKey): boolean {
  return root.fd !== undefined && isLongPath(pathBelow(root.root, key));
}

/** Checks that an opened folder lies inside the root (`folderPlacedInside`). */
function folderFdInside(root: SafeRoot): (fd: number) => boolean {
  return (fd) => folderPlacedInside(root, fd);
}

/**
 * True when the opened folder `fd` lies inside the root now. The kernel names a descriptor only
 * while its path fits one system call (ENAMETOOLONG beyond); a deeper folder is placed by its
 * nearest ancestor the kernel can name, reached by `..` through the descriptors: where the folder
 * is now, not where it was named, and a folder below one inside the root is inside it.
 */
export function folderPlacedInside(root: SafeRoot, fd: number): boolean {
  const climbed: number[] = [];
  let at = fd;
  try {
    for (;;) {
      try {
        return placedInside(root, fs.readlinkSync(`/proc/self/fd/${at}`, { encoding: 'buffer' }));
      } catch (err) {
        if (errnoCode(err) !== 'ENAMETOOLONG') return false;
      }
      at = fs.openSync(`/proc/self/fd/${at}/..`, DIR_FLAGS);
      climbed.push(at);
    }
  } catch {
    return false;
  } finally {
    for (const c of climbed) fs.closeSync(c);
  }
}

/** Why a folder on a long path could not be passed: gone, a link or outside the root, or denied. */
function longPathFailure(
  err: unknown,
): { kind: 'absent' } | { kind: 'unreadable'; reason: UnreadableReason; code?: string } {
  const code = errnoCode(err);
  if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'absent' };
  // A folder on the way is now a link (never followed there) or leads outside the root.
  if (code === 'ELOOP' || code === 'EXDEV') return { kind: 'unreadable', reason: 'outside_root', code };
  return { kind: 'unreadable', reason: 'denied', ...(code ? { code } : {}) };
}

const denied = (err: unknown): OpenResult => {
  const code = errnoCode(err);
  return { kind: 'unreadable', reason: 'denied', ...(code ? { code } : {}) };
};

/**
 * Opens `abs` without following a final link or blocking, and hands back the descriptor only when
 * it is a regular file that `inside` accepts (the caller's containment check); otherwise closes it
 * and says why.
 */
function openChecked(abs: string | Buffer, inside: ((fd: number, stat: fs.Stats) => boolean) | null): OpenResult {
  let fd: number;
  try {
    fd = fs.openSync(abs, OPEN_FLAGS);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'absent' };
    if (code === 'ELOOP') return { kind: 'symlink' };
    if (code === 'ENXIO') return { kind: 'unreadable', reason: 'not_regular', code }; // a socket
    return denied(err);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) {
      fs.closeSync(fd);
      return { kind: 'unreadable', reason: 'not_regular' };
    }
    if (inside !== null && !inside(fd, stat)) {
      fs.closeSync(fd);
      return { kind: 'unreadable', reason: 'outside_root' };
    }
    return { kind: 'file', fd, stat };
  } catch (err) {
    fs.closeSync(fd);
    return denied(err);
  }
}

/**
 * The text of a symbolic link below the root. A link's text is read by name (there is no way to
 * open a link itself here), so the folder holding it is checked to be below the root before and
 * after the read: a folder swapped in between is caught.
 */
export function readLinkInside(root: SafeRoot, key: PathKey): EntryRead {
  const abs = pathBelow(baseOf(root), key);
  if (isLongPath(abs) || deepBelow(root, key)) {
    // Its folder is reached through descriptors, never a link: the text is read inside the root.
    try {
      const target = throughFolder(abs, (p) => fs.readlinkSync(p, { encoding: 'buffer' }), folderFdInside(root));
      return { kind: 'symlink', target };
    } catch (err) {
      if (errnoCode(err) === 'EINVAL') return { kind: 'unreadable', reason: 'changing', code: 'EINVAL' };
      return longPathFailure(err);
    }
  }
  const slash = typeof abs === 'string' ? abs.lastIndexOf('/') : abs.lastIndexOf(0x2f);
  const parent = typeof abs === 'string' ? abs.slice(0, slash) : abs.subarray(0, slash);
  const parentInside = (): boolean => {
    const real = fs.realpathSync(parent, { encoding: 'buffer' });
    return placedInside(root, real);
  };
  try {
    if (!parentInside()) return { kind: 'unreadable', reason: 'outside_root' };
    const target = fs.readlinkSync(abs, { encoding: 'buffer' });
    if (!parentInside()) return { kind: 'unreadable', reason: 'outside_root' };
    return { kind: 'symlink', target };
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'absent' };
    if (code === 'EINVAL') return { kind: 'unreadable', reason: 'changing', code }; // no longer a link
    return { kind: 'unreadable', reason: 'denied', ...(code ? { code } : {}) };
  }
}

/**
 * Reads an open descriptor to its end into `dst` at `at`, expecting `size` bytes; true when it
 * held exactly that many. `dst` must have one spare byte after `at + size`: the first read asks for
 * one more byte than expected, so a file that grew is seen without a second read. A short read at
 * exactly the expected size is end of file on a regular file (Linux, macOS).
 */
export function readFdExact(fd: number, dst: Uint8Array, at: number, size: number): boolean {
  let got = 0;
  for (;;) {
    const want = size + 1 - got;
    const n = fs.readSync(fd, dst, at + got, want, got);
    if (n === 0) return got === size;
    got += n;
    if (got > size) return false;
    if (n < want && got === size) return true;
  }
}

/**
 * Reads an open descriptor from its start to its end, for a file whose size changed since it was
 * measured; null when it holds more than `maxBytes` (the caller then has no content for it rather
 * than an unbounded read).
 */
export function readFdToEnd(fd: number, maxBytes: number): Buffer | null {
  const chunks: Buffer[] = [];
  let got = 0;
  for (;;) {
    const buf = Buffer.allocUnsafe(Math.min(Math.max(maxBytes - got + 1, 1), 1024 * 1024));
    const n = fs.readSync(fd, buf, 0, buf.length, got);
    if (n === 0) return Buffer.concat(chunks, got);
    got += n;
    if (got > maxBytes) return null;
    chunks.push(buf.subarray(0, n));
  }
}

/**
 * A small regular file named by an absolute path (a repository's own pointer files), or null when
 * it is absent, not a regular file (a FIFO never blocks the open), a final symlink, or over
 * `maxBytes` when read: the checks hold for what was opened, so a swap after a stat cannot slip by.
 */
export function readRegularFile(abs: string, maxBytes: number): Buffer | null {
  const opened = openChecked(abs, null);
  if (opened.kind !== 'file') return null;
  try {
    return readFdToEnd(opened.fd, maxBytes);
  } catch {
    return null;
  } finally {
    fs.closeSync(opened.fd);
  }
}

/**
 * The last bytes (at most `maxBytes`) of a regular file named by an absolute path, and whether
 * they are the whole file; null on the same grounds as `readRegularFile` (absent, not regular, a
 * final symlink, unreadable). For a file that only grows (a log): what it held when measured.
 */
export function readRegularFileTail(abs: string, maxBytes: number): { bytes: Buffer; whole: boolean } | null {
  const opened = openChecked(abs, null);
  if (opened.kind !== 'file') return null;
  try {
    const size = opened.stat.size;
    const start = Math.max(0, size - maxBytes);
    const buf = Buffer.allocUnsafe(size - start);
    let got = 0;
    while (got < buf.length) {
      const n = fs.readSync(opened.fd, buf, got, buf.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    return { bytes: buf.subarray(0, got), whole: start === 0 };
  } catch {
    return null;
  } finally {
    fs.closeSync(opened.fd);
  }
}

/**
 * Reads one workspace entry: a regular file's bytes (up to `maxBytes`), a symlink's text, or why
 * it could not be read. Never follows a link, never blocks on a FIFO, never leaves the root.
 */
export function readInside(root: SafeRoot, key: PathKey, maxBytes = Number.MAX_SAFE_INTEGER): EntryRead {
  const opened = openInside(root, key);
  if (opened.kind === 'symlink') return readLinkInside(root, key);
  if (opened.kind !== 'file') return opened;
  const { fd, stat } = opened;
  try {
    if (stat.size > maxBytes) return { kind: 'too_large', size: stat.size, mode: stat.mode };
    const buf = Buffer.allocUnsafe(stat.size + 1);
    if (!readFdExact(fd, buf, 0, stat.size)) return { kind: 'unreadable', reason: 'changing' };
    return { kind: 'file', bytes: buf.subarray(0, stat.size), mode: stat.mode, uid: stat.uid, gid: stat.gid };
  } catch (err) {
    const code = errnoCode(err);
    return { kind: 'unreadable', reason: 'denied', ...(code ? { code } : {}) };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A folder below the root, opened once and checked once to lie below the root. Files in it are
 * opened by their single name through the folder's own descriptor (`/proc/self/fd/N/name`), so a
 * folder on the path swapped for a symlink afterwards cannot redirect them, and each file costs an
 * open, an fstat, its reads and a close: no containment check per file. Linux only; elsewhere
 * `openFolderInside` returns null and files are opened with `openInside`.
 */
export interface FolderInside {
  fd: number;
  /** `/proc/self/fd/N/`: names joined onto it resolve inside the opened folder. */
  base: string;
}

/**
 * Opens the folder `key` ('' = the root) and checks it lies below the root; null when it cannot be
 * (absent, a symlink, outside, no `/proc`): its files are then opened one by one with `openInside`,
 * which says why each cannot be read. The caller closes `fd` with `closeFolder`.
 */
export function openFolderInside(root: SafeRoot, key: PathKey): FolderInside | null {
  if (!HAS_PROC_FD) return null;
  // A root held open is reopened as its own `.`: its descriptor's magic link is not followed
  // under O_NOFOLLOW as a final name.
  const base = baseOf(root);
  const abs = key === '' ? (root.fd !== undefined ? base + '.' : root.root) : pathBelow(base, key);
  if (isLongPath(abs)) {
    try {
      const fd = openLongFolder(abs, folderFdInside(root));
      return { fd, base: `/proc/self/fd/${fd}/` };
    } catch {
      return null;
    }
  }
  let fd: number;
  try {
    fd = fs.openSync(abs, DIR_FLAGS);
  } catch {
    return null;
  }
  try {
    if (folderFdInside(root)(fd)) return { fd, base: `/proc/self/fd/${fd}/` };
  } catch {
    // fall through: not usable
  }
  fs.closeSync(fd);
  return null;
}

export function closeFolder(folder: FolderInside): void {
  fs.closeSync(folder.fd);
}

/**
 * Opens the file `name` (one path component, no `/`) in an opened folder: never follows a final
 * symlink, never blocks on a FIFO, and only a regular file is handed back. Same results as
 * `openInside` for that file.
 */
export function openInFolder(folder: FolderInside, name: PathKey): OpenResult {
  const abs = pathBelow(folder.base, name);
  // The folder was checked once when it was opened; its files are reached through its descriptor.
  return openChecked(abs, null);
}
