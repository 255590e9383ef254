import type { PathKey } from '../../paths/index.ts';
import { LACK_MEMORY_CAP, ORIGIN_HASH, ORIGIN_SNAPSHOT, type FileTable } from '../model.ts';
import { blockOf, type WalkCheckpoint, type WalkState } from './kept-bytes.ts';

/**
 * Start contents taken from another checkpoint of the same folder that the engine still holds,
 * instead of reading the files again. A file whose lstat is the one that checkpoint recorded, and
 * was not racy there, has the bytes that checkpoint kept: the rule by which a completion calls a
 * file unchanged (B3). Its kept bytes are shared with that checkpoint (or copied), within the
 * memory grant, or its blob id taken when it kept only that; a file it could not keep for lack of
 * memory is read again.
 */

export interface HeldReuse {
  /** The files still to be read (indexes into `files`, in order). */
  rest: number[];
  /** The files whose kept bytes are taken from the held checkpoint (`shareHeldBytes`, `withHeldBytes`), with their row in the held table. */
  copies: { fi: number; hi: number }[];
  /** Memory granted for the copies. */
  granted: number;
}

const pathIndexes = new WeakMap<FileTable, Map<PathKey, number>>();

/** Row numbers by path of a held checkpoint's table (built once per checkpoint). */
function indexOf(t: FileTable): Map<PathKey, number> {
  let got = pathIndexes.get(t);
  if (!got) {
    got = new Map();
    for (let i = 0; i < t.paths.length; i++) got.set(t.paths[i]!, i);
    pathIndexes.set(t, got);
  }
  return got;
}

/**
 * Which of `toRead` the held checkpoint vouches for: those that kept only a blob id get it now;
 * those whose bytes fit the memory grant are to be copied; the others are still to be read.
 */
export function reuseHeldContents(
  files: FileTable,
  toRead: readonly number[],
  held: FileTable | null,
  reserveMemory: (wanted: number) => number,
): HeldReuse {
  if (!held || held.paths.length === 0 || toRead.length === 0) return { rest: [...toRead], copies: [], granted: 0 };
  const h = held;
  let rows: Map<PathKey, number> | undefined;
  const snapshots: { fi: number; hi: number }[] = [];
  const rest: number[] = [];
  let wanted = 0;
  let next = 0; // both tables are in walk order: the row after the last match is the likely one
  for (const fi of toRead) {
    const p = files.paths[fi]!;
    const hi = next < h.paths.length && h.paths[next] === p ? next : (rows ??= indexOf(h)).get(p);
    if (hi !== undefined) next = hi + 1;
    const usable =
      hi !== undefined &&
      h.racy[hi] === 0 &&
      h.size[hi] === files.size[fi] &&
      h.mtimeMs[hi] === files.mtimeMs[fi] &&
      h.ctimeMs[hi] === files.ctimeMs[fi] &&
      h.ino[hi] === files.ino[fi] &&
      h.mode[hi] === files.mode[fi] &&
      (h.origin[hi] === ORIGIN_SNAPSHOT || (h.origin[hi] === ORIGIN_HASH && h.lack[hi] !== LACK_MEMORY_CAP));
    if (!usable) rest.push(fi);
    else if (h.origin[hi] === ORIGIN_HASH) {
      files.origin[fi] = ORIGIN_HASH;
      files.lack[fi] = h.lack[hi]!;
      files.binary[fi] = h.binary[hi]!;
      files.oids.set(h.oids.subarray(hi * 20, hi * 20 + 20), fi * 20);
    } else {
      snapshots.push({ fi, hi });
      wanted += h.snapLength[hi]!;
    }
  }
  const granted = wanted > 0 ? reserveMemory(wanted) : 0;
  const copies: { fi: number; hi: number }[] = [];
  let used = 0;
  let short = false;
  for (const c of snapshots) {
    const len = h.snapLength[c.hi]!;
    if (used + len > granted) {
      rest.push(c.fi); // no room: read like the others (it may keep its blob id only)
      short = true;
      continue;
    }
    copies.push(c);
    used += len;
  }
  if (short) rest.sort((x, y) => x - y);
  return { rest, copies, granted };
}

/** The held checkpoint whose kept bytes a new checkpoint reuses. */
export type HeldCheckpoint = Pick<WalkCheckpoint, 'files' | 'block' | 'state'>;

/** The most blocks a checkpoint refers to before its reused bytes are copied instead. */
export const MAX_SHARED_BLOCKS = 8;

/**
 * The reused rows of `copies` refer to the held checkpoint's bytes where they already are, with
 * no copy: the held block (and the blocks it refers to itself) are shared, which buffers allow
 * because no kept block is written after its checkpoint is taken. Null when there is nothing to
 * share, or when the held checkpoint already refers to so many blocks that the chain would grow
 * past `MAX_SHARED_BLOCKS` (then `withHeldBytes` copies).
 */
export function shareHeldBytes(
  files: FileTable,
  copies: readonly { fi: number; hi: number }[],
  held: HeldCheckpoint,
): WalkState | null {
  if (copies.length === 0) return null;
  const shared = [held.block, ...(held.state?.shared ?? [])];
  if (shared.length > MAX_SHARED_BLOCKS) return null;
  const h = held.files;
  const hFrom = held.state?.from;
  const from = new Uint8Array(files.paths.length);
  for (const { fi, hi } of copies) {
    from[fi] = 1 + (hFrom?.[hi] ?? 0);
    files.origin[fi] = ORIGIN_SNAPSHOT;
    files.binary[fi] = h.binary[hi]!;
    files.snapOffset[fi] = h.snapOffset[hi]!;
    files.snapLength[fi] = h.snapLength[hi]!;
  }
  return { shared, from };
}

/**
 * One block with the bytes just read (`read`, whose offsets stay) and, after them, the held bytes
 * of `copies`, whose rows get their origin and offsets into it (for when sharing is refused).
 */
export function withHeldBytes(
  files: FileTable,
  copies: readonly { fi: number; hi: number }[],
  held: HeldCheckpoint,
  read: Buffer,
): Buffer {
  if (copies.length === 0) return read;
  const h = held.files;
  let total = read.length;
  for (const { hi } of copies) total += h.snapLength[hi]!;
  const block = Buffer.allocUnsafe(total);
  read.copy(block, 0);
  let at = read.length;
  // Rows whose held bytes lie one after the other in one block are copied as one run: a
  // checkpoint of a folder whose files mostly did not change copies in a few large pieces, not in
  // one small copy per file.
  let runBlock: Buffer | null = null;
  let runFrom = -1;
  let runTo = -1;
  let runAt = at;
  const flush = () => {
    if (runBlock && runTo > runFrom) runBlock.copy(block, runAt, runFrom, runTo);
  };
  for (const { fi, hi } of copies) {
    const len = h.snapLength[hi]!;
    const from = h.snapOffset[hi]!;
    const src = blockOf(held, hi);
    if (src !== runBlock || from !== runTo) {
      flush();
      runBlock = src;
      runFrom = from;
      runAt = at;
    }
    runTo = from + len;
    files.origin[fi] = ORIGIN_SNAPSHOT;
    files.binary[fi] = h.binary[hi]!;
    files.snapOffset[fi] = at;
    files.snapLength[fi] = len;
    at += len;
  }
  flush();
  return block;
}
