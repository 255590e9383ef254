import type { PathKey } from '../../paths/index.ts';

/**
 * A repository's index as the engine keeps it between the two ends of a run: per entry its path,
 * mode, blob id, stage, recorded time and the flags that make `git status` look away
 * (assume-unchanged, skip-worktree), in a few flat arrays (~35 bytes per entry plus the path bytes: about 7 MiB for
 * 100,000 entries, shared by every checkpoint taken while the index did not change).
 * Entries stay in git's order (path bytes, then stage), so two snapshots are compared in one walk.
 */

/** Mode codes. */
export const IX_FILE = 1;
export const IX_EXEC = 2;
export const IX_LINK = 3;
export const IX_GITLINK = 4;
export const IX_OTHER = 5;

/** Flag bits. */
/** `git update-index --assume-unchanged`: git status does not look at the file. */
export const IX_ASSUME_UNCHANGED = 1;
/** skip-worktree (sparse checkout, `--skip-worktree`): git status does not look at the file either. */
export const IX_SKIP_WORKTREE = 2;

const MODE_TEXT = ['', '100644', '100755', '120000', '160000', '100644'];

export interface IndexSnapshot {
  count: number;
  /** Path bytes back to back; entry i is `paths[pathStart[i] .. pathStart[i+1]]`. */
  paths: Buffer;
  pathStart: Uint32Array;
  /** 20-byte blob ids back to back. */
  oids: Buffer;
  mode: Uint8Array;
  stage: Uint8Array;
  flags: Uint8Array;
  /** max(ctime, mtime) in whole seconds as the index recorded them (git compares only seconds here). */
  stamp: Uint32Array;
  /** File size as the index recorded it (the blob's size when no filter applies; low 32 bits). */
  size: Uint32Array;
  /** Bytes held (for the memory figures). */
  bytes: number;
}

export interface IndexEntryView {
  mode: string;
  oid: string;
  size: number;
  stage: number;
  flags: number;
}

/** The index can only be read by git itself (split index, sparse directories, SHA-256, a newer format). */
export class UnreadableIndexError extends Error {}

/**
 * Parses an index file (versions 2-4, SHA-1), keeping the entries below `topPrefix` (the folder
 * the listing is for, relative to the repository's top level; '' for all) with that prefix
 * removed. Extensions are skipped; one that changes which entries the file holds (a split index's
 * `link`, a sparse index's folder entries) makes the index unreadable here.
 */
export function parseIndexFile(buf: Buffer, topPrefix: PathKey): IndexSnapshot {
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') throw new UnreadableIndexError('not an index file');
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) throw new UnreadableIndexError(`index version ${version}`);
  const total = buf.readUInt32BE(8);
  const prefix = Buffer.from(topPrefix, 'latin1');
  // Two passes over the entries, sizing the arrays first: no object per entry (100,000 of them
  // would outlive the parse as heap the process keeps).
  let count = 0;
  let pathBytes = 0;
  const end = walkEntries(buf, version, total, prefix, (_at, _flags, _ext, _src, start, stop) => {
    count++;
    pathBytes += stop - start - prefix.length;
  });
  // Extensions: a split index keeps its entries elsewhere.
  for (let e = end; e + 8 <= buf.length - 20;) {
    const sig = buf.toString('latin1', e, e + 4);
    if (sig === 'link' || sig === 'sdir') throw new UnreadableIndexError(`index extension ${sig}`);
    e += 8 + buf.readUInt32BE(e + 4);
  }
  const paths = Buffer.allocUnsafe(pathBytes);
  const pathStart = new Uint32Array(count + 1);
  const oids = Buffer.allocUnsafe(count * 20);
  const mode = new Uint8Array(count);
  const stage = new Uint8Array(count);
  const flags = new Uint8Array(count);
  const stamp = new Uint32Array(count);
  const size = new Uint32Array(count);
  let at = 0;
  let i = 0;
  walkEntries(buf, version, total, prefix, (entry, f, ext, src, start, stop) => {
    pathStart[i] = at;
    // Byte loops: a path or a blob id is a few dozen bytes, less than the cost of a native copy call.
    for (let k = start + prefix.length; k < stop; k++) paths[at++] = src[k]!;
    for (let k = 0, o = i * 20; k < 20; k++) oids[o + k] = buf[entry + 40 + k]!;
    mode[i] = modeCode(buf.readUInt32BE(entry + 24));
    stage[i] = (f >> 12) & 3;
    flags[i] = (f & 0x8000 ? IX_ASSUME_UNCHANGED : 0) | (ext & 0x4000 ? IX_SKIP_WORKTREE : 0);
    stamp[i] = Math.max(buf.readUInt32BE(entry), buf.readUInt32BE(entry + 8));
    size[i] = buf.readUInt32BE(entry + 36);
    i++;
  });
  pathStart[count] = at;
  return {
    count,
    paths,
    pathStart,
    oids,
    mode,
    stage,
    flags,
    stamp,
    size,
    bytes: paths.length + pathStart.byteLength + oids.length + mode.length * 3 + stamp.byteLength * 2,
  };
}

function modeCode(bits: number): number {
  switch (bits) {
    case 0o100644:
      return IX_FILE;
    case 0o100755:
      return IX_EXEC;
    case 0o120000:
      return IX_LINK;
    case 0o160000:
      return IX_GITLINK;
    default:
      return IX_OTHER;
  }
}

/**
 * Calls `visit` for each entry whose path lies below `prefix`, naming the path as a byte range of
 * `src` (valid only during the call; no object made per entry); returns where the entries end
 * (the extensions start).
 */
function walkEntries(
  buf: Buffer,
  version: number,
  total: number,
  prefix: Buffer,
  visit: (entry: number, flags: number, ext: number, src: Buffer, start: number, end: number) => void,
): number {
  // v4 paths are stored as "drop N bytes of the previous path, then add this": rebuilt in `prev`.
  let prev = Buffer.allocUnsafe(4096);
  let prevLen = 0;
  let pos = 12;
  for (let n = 0; n < total; n++) {
    if (pos + 62 > buf.length) throw new UnreadableIndexError('index entry past the end of the file');
    const at = pos;
    const flags = buf.readUInt16BE(at + 60);
    let p = at + 62;
    let ext = 0;
    if (flags & 0x4000) {
      if (version < 3) throw new UnreadableIndexError('extended flags in a version 2 index');
      ext = buf.readUInt16BE(p);
      p += 2;
    }
    let src = buf;
    let start: number;
    let stop: number;
    if (version === 4) {
      let c = buf[p++]!;
      let drop = c & 0x7f;
      while (c & 0x80) {
        c = buf[p++]!;
        drop = ((drop + 1) << 7) | (c & 0x7f);
      }
      const nul = buf.indexOf(0, p);
      if (nul === -1 || drop > prevLen) throw new UnreadableIndexError('bad index path');
      const keep = prevLen - drop;
      const len = keep + (nul - p);
      if (len > prev.length) {
        const grown = Buffer.allocUnsafe(Math.max(len, prev.length * 2));
        prev.copy(grown, 0, 0, keep);
        prev = grown;
      }
      buf.copy(prev, keep, p, nul);
      prevLen = len;
      src = prev;
      start = 0;
      stop = len;
      pos = nul + 1;
    } else {
      // The flags hold the name's length below 0xFFF (git reads it the same way): no search for its end.
      const named = flags & 0x0fff;
      const nul = named < 0x0fff ? p + named : buf.indexOf(0, p + named);
      if (nul === -1 || nul >= buf.length || buf[nul] !== 0) throw new UnreadableIndexError('bad index path');
      start = p;
      stop = nul;
      // Entries are padded with 1-8 NULs to a multiple of 8 bytes from the entry's start.
      pos = at + ((nul - at + 8) & ~7);
    }
    const mode = buf.readUInt32BE(at + 24);
    if ((mode & 0o170000) === 0o040000) throw new UnreadableIndexError('sparse index folder entry');
    if (
      prefix.length === 0 ||
      (stop - start > prefix.length && src.compare(prefix, 0, prefix.length, start, start + prefix.length) === 0)
    )
      visit(at, flags, ext, src, start, stop);
  }
  return pos;
}

/** An empty index (a repository without one yet). */
export function emptyIndex(): IndexSnapshot {
  return parseIndexFile(Buffer.from('DIRC\0\0\0\x02\0\0\0\0', 'latin1'), '');
}

/**
 * Entries whose recorded stat is within `sinceSec` or later: git compares times in whole seconds,
 * so an edit in the same second that keeps the size (and restores the mtime) passes for clean.
 * The engine reads these itself.
 */
export function recentPaths(ix: IndexSnapshot, sinceSec: number): PathKey[] {
  const out: PathKey[] = [];
  for (let i = 0; i < ix.count; i++) {
    if (ix.stamp[i]! >= sinceSec && ix.mode[i] !== IX_GITLINK) out.push(entryPath(ix, i));
  }
  return out;
}

export function entryPath(ix: IndexSnapshot, i: number): PathKey {
  return ix.paths.toString('latin1', ix.pathStart[i], ix.pathStart[i + 1]);
}

export function entryOid(ix: IndexSnapshot, i: number): string {
  return ix.oids.toString('hex', i * 20, i * 20 + 20);
}

export function modeTextOf(code: number): string {
  return MODE_TEXT[code] ?? '100644';
}

/** Sign of (entry i's path - `key`), in git's order (unsigned bytes). */
function comparePath(ix: IndexSnapshot, i: number, key: Buffer): number {
  return ix.paths.compare(key, 0, key.length, ix.pathStart[i], ix.pathStart[i + 1]);
}

/** The first entry of `path` (its stage 0 if merged, else its lowest stage); -1 when not in the index. */
export function findEntry(ix: IndexSnapshot, path: PathKey): number {
  const key = Buffer.from(path, 'latin1');
  let lo = 0;
  let hi = ix.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (comparePath(ix, mid, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < ix.count && comparePath(ix, lo, key) === 0 ? lo : -1;
}

/** The merged (stage 0) entry of `path` that is a file or link, or null (absent, conflicted, a submodule). */
export function cleanEntry(ix: IndexSnapshot, path: PathKey): IndexEntryView | null {
  const i = findEntry(ix, path);
  if (i === -1 || ix.stage[i] !== 0 || ix.mode[i] === IX_GITLINK) return null;
  return { mode: modeTextOf(ix.mode[i]!), oid: entryOid(ix, i), size: ix.size[i]!, stage: 0, flags: ix.flags[i]! };
}

function sameEntry(a: IndexSnapshot, i: number, b: IndexSnapshot, j: number): boolean {
  return (
    a.mode[i] === b.mode[j] &&
    a.stage[i] === b.stage[j] &&
    a.oids.compare(b.oids, j * 20, j * 20 + 20, i * 20, i * 20 + 20) === 0
  );
}

/**
 * Paths whose entries differ between two snapshots (added, removed, another blob, mode or stage):
 * a commit, checkout, reset, stash or `git add` during the run. Submodule entries are left out
 * (a nested repository's files are compared through its own index).
 */
export function changedEntries(a: IndexSnapshot, b: IndexSnapshot): PathKey[] {
  if (a === b) return [];
  const out: PathKey[] = [];
  const push = (ix: IndexSnapshot, i: number) => {
    if (ix.mode[i] === IX_GITLINK) return;
    const p = entryPath(ix, i);
    if (out[out.length - 1] !== p) out.push(p);
  };
  let i = 0;
  let j = 0;
  while (i < a.count || j < b.count) {
    if (j >= b.count) {
      push(a, i++);
      continue;
    }
    if (i >= a.count) {
      push(b, j++);
      continue;
    }
    const c = a.paths.compare(b.paths, b.pathStart[j], b.pathStart[j + 1], a.pathStart[i], a.pathStart[i + 1]);
    // c is the sign of (a's path - b's path): the smaller one is missing from the other side.
    if (c < 0) push(a, i++);
    else if (c > 0) push(b, j++);
    else {
      if (!sameEntry(a, i, b, j)) push(a, i);
      i++;
      j++;
    }
  }
  return out;
}

/** Paths `git status` does not look at (assume-unchanged, skip-worktree): the engine reads them itself. */
export function flaggedPaths(ix: IndexSnapshot): PathKey[] {
  const out: PathKey[] = [];
  for (let i = 0; i < ix.count; i++) {
    if (ix.flags[i] !== 0 && ix.mode[i] !== IX_GITLINK) out.push(entryPath(ix, i));
  }
  return out;
}

/** Submodule folders (gitlink entries): repositories of their own, compared through their own index. */
export function gitlinkPaths(ix: IndexSnapshot): PathKey[] {
  const out: PathKey[] = [];
  for (let i = 0; i < ix.count; i++) if (ix.mode[i] === IX_GITLINK && ix.stage[i] === 0) out.push(entryPath(ix, i));
  return out;
}

const ATTRIBUTES = Buffer.from('.gitattributes', 'latin1');
const attributeFiles = new WeakMap<IndexSnapshot, boolean>();

/** Whether any tracked file is a `.gitattributes` (computed once per snapshot). */
export function tracksAttributes(ix: IndexSnapshot): boolean {
  let known = attributeFiles.get(ix);
  if (known === undefined) {
    known = false;
    for (let i = 0; i < ix.count && !known; i++) {
      const end = ix.pathStart[i + 1]!;
      const start = end - ATTRIBUTES.length;
      if (start < ix.pathStart[i]!) continue;
      if (start > ix.pathStart[i]! && ix.paths[start - 1] !== 0x2f) continue;
      known = ix.paths.compare(ATTRIBUTES, 0, ATTRIBUTES.length, start, end) === 0;
    }
    attributeFiles.set(ix, known);
  }
  return known;
}
