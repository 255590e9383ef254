import fs from 'node:fs';
import { DIR_FLAGS, HAS_PROC_FD } from './descriptors.ts';

/**
 * Reaching files on paths longer than one system call accepts. Linux refuses a path of PATH_MAX
 * (4,096) bytes or more, terminating NUL included, with ENAMETOOLONG, yet deeper files exist (made
 * by relative steps or `openat`): a reader that gives up on them leaves a place where changes are
 * never seen. Such a path is reached a folder at a time instead: the deepest folder on it whose path
 * is short enough is opened by name, each further folder by its single name through the previous
 * folder's descriptor (`/proc/self/fd/N/name`, never following a symlink, so nothing is reached
 * outside the folders named), and the last name is used through the last descriptor.
 */

/** The longest path, in bytes, that one system call takes (PATH_MAX less its NUL). */
export const MAX_SYSCALL_PATH_BYTES = 4095;

const SLASH = 0x2f;

function bytesOf(p: string | Buffer): Buffer {
  return typeof p === 'string' ? Buffer.from(p, 'utf8') : p;
}

/** True when `abs` must be reached a folder at a time (and can be: Linux, with `/proc`). */
export function isLongPath(abs: string | Buffer): boolean {
  const n = typeof abs === 'string' ? Buffer.byteLength(abs, 'utf8') : abs.length;
  return n > MAX_SYSCALL_PATH_BYTES && HAS_PROC_FD;
}

/** `/proc/self/fd/N/` followed by `name`'s bytes (text when it is all ASCII). */
function throughFd(fd: number, name: Buffer): string | Buffer {
  const base = `/proc/self/fd/${fd}/`;
  for (const b of name) if (b >= 0x80) return Buffer.concat([Buffer.from(base), name]);
  return base + name.toString('latin1');
}

/**
 * Opens the folder `abs` (absolute, any length) and returns its descriptor, which the caller
 * closes. Its short leading part is opened by name, with `O_NOFOLLOW` on its last folder; every
 * folder after it by its own name through the previous one's descriptor, never following a link.
 * `leadingInside`, when given, is told the descriptor of that leading folder (its path is short
 * enough to be named by the kernel) and must accept it, or the open fails with `outside`.
 * Throws the errno error of the step that failed.
 */
export function openLongFolder(abs: string | Buffer, leadingInside?: (fd: number) => boolean): number {
  const bytes = bytesOf(abs);
  // The leading part: the longest prefix ending at a `/` that one call takes.
  let cut = bytes.lastIndexOf(SLASH, MAX_SYSCALL_PATH_BYTES);
  if (cut <= 0) cut = bytes.length;
  let fd = fs.openSync(bytes.subarray(0, cut), DIR_FLAGS);
  try {
    if (leadingInside && !leadingInside(fd)) {
      const err = new Error('the leading folder lies outside the root') as NodeJS.ErrnoException;
      err.code = 'EXDEV';
      throw err;
    }
    let at = cut + 1;
    while (at < bytes.length) {
      let end = bytes.indexOf(SLASH, at);
      if (end === -1) end = bytes.length;
      if (end > at) {
        const next = fs.openSync(throughFd(fd, bytes.subarray(at, end)), DIR_FLAGS);
        fs.closeSync(fd);
        fd = next;
      }
      at = end + 1;
    }
    return fd;
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/**
 * Calls `use` with a path that names what `abs` names and that one system call accepts: `abs`
 * itself when it is short, else its last name through its folder's descriptor (opened with
 * `openLongFolder`, closed when `use` returns). Only the last name may be a link that `use`
 * follows; the folders before it are never links.
 */
export function withReachablePath<T>(
  abs: string | Buffer,
  use: (reachable: string | Buffer) => T,
  leadingInside?: (fd: number) => boolean,
): T {
  if (!isLongPath(abs)) return use(abs);
  return throughFolder(abs, use, leadingInside);
}

/**
 * Calls `use` with `abs`'s last name through its folder's descriptor, whatever `abs`'s length: for
 * a path named short through an opened root (`/proc/self/fd/N/...`) whose real path is too long
 * for the kernel to name what is opened, so its folder is checked instead (`leadingInside`).
 */
export function throughFolder<T>(
  abs: string | Buffer,
  use: (reachable: string | Buffer) => T,
  leadingInside?: (fd: number) => boolean,
): T {
  const bytes = bytesOf(abs);
  const slash = bytes.lastIndexOf(SLASH);
  const fd = openLongFolder(bytes.subarray(0, slash), leadingInside);
  try {
    return use(throughFd(fd, bytes.subarray(slash + 1)));
  } finally {
    fs.closeSync(fd);
  }
}
