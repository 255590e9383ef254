import fs from 'node:fs';
import { withReachablePath } from '../../fs/index.ts';
import type { PathKey } from '../../paths/index.ts';
import { RACY_MARGIN_MS } from '../model.ts';

/**
 * How far a file's times may trail the moment they were set: Linux stamps a write with its coarse
 * clock, which lags the real one by up to one scheduler tick (4-10 ms; 50 ms leaves room).
 */
export const FINE_TIME_SLACK_MS = 50;
/** The same on a file system that keeps whole seconds only (FAT keeps two): a full racy margin. */
export const COARSE_TIME_SLACK_MS = RACY_MARGIN_MS;

/**
 * True when an entry with these times was last changed before `startedAtMs`, within the slack its
 * file system's times need (see {@link FINE_TIME_SLACK_MS}): a change after it would have a later
 * ctime, which nothing can set back.
 */
export function settledBefore(st: { ctimeMs: number; mtimeMs: number }, startedAtMs: number): boolean {
  const last = Math.max(st.ctimeMs, st.mtimeMs);
  return last < startedAtMs - (last % 1000 === 0 ? COARSE_TIME_SLACK_MS : FINE_TIME_SLACK_MS);
}

/**
 * True when `p` (a file) and every folder between `base` and it were last changed before
 * `startedAtMs` (a checkpoint's start): then the file stood at this path with these bytes since
 * before it. Linux sets a file's ctime to the current time on every write, chmod, link and rename
 * (the file's own, or one of a folder above it, renames that folder), and nothing can set it back;
 * so a path created, moved in or written since has a later ctime on some part of it. A time with a
 * part of a second shows a file system that keeps fine times, judged within
 * {@link FINE_TIME_SLACK_MS}; whole seconds may be a coarse one, judged within the racy margin. A
 * file written just before the checkpoint is therefore vouched for unless it is within that slack.
 * `base` ('' for the root) is a folder known to be the same one as then (the root, or a folder of
 * the same inode).
 */
export function untouchedSince(root: string, base: PathKey, p: PathKey, startedAtMs: number): boolean {
  if (base !== '' && !p.startsWith(base + '/')) return false;
  const rootBytes = Buffer.from(root.endsWith('/') ? root : root + '/');
  let at = base === '' ? 0 : base.length + 1;
  for (;;) {
    const slash = p.indexOf('/', at);
    const part = slash === -1 ? p : p.slice(0, slash);
    let st: fs.Stats;
    try {
      st = withReachablePath(Buffer.concat([rootBytes, Buffer.from(part, 'latin1')]), (q) => fs.lstatSync(q));
    } catch {
      return false;
    }
    if (!settledBefore(st, startedAtMs)) return false;
    if (slash === -1) return st.isFile() || st.isSymbolicLink();
    if (!st.isDirectory()) return false;
    at = slash + 1;
  }
}

/** The folder of `p` nearest to it in `folders` (keys without a slash) that is the same inode now, else ''. */
export function sameFolderAbove(root: string, folders: ReadonlyMap<PathKey, number>, p: PathKey): PathKey {
  const rootBytes = Buffer.from(root.endsWith('/') ? root : root + '/');
  for (let slash = p.lastIndexOf('/'); slash > 0; slash = p.lastIndexOf('/', slash - 1)) {
    const dir = p.slice(0, slash);
    const ino = folders.get(dir);
    if (ino === undefined) continue;
    try {
      const st = withReachablePath(Buffer.concat([rootBytes, Buffer.from(dir, 'latin1')]), (q) => fs.lstatSync(q));
      if (st.isDirectory() && st.ino === ino) return dir;
    } catch {
      // gone: a folder further up, or the root
    }
  }
  return '';
}
