import { describe, expect, it } from 'vitest';
import {
  LACK_MEMORY_CAP,
  LACK_TOO_LARGE,
  ORIGIN_HASH,
  ORIGIN_NONE,
  ORIGIN_SNAPSHOT,
  type FileTable,
} from '../model.ts';
import { MAX_SHARED_BLOCKS, reuseHeldContents, shareHeldBytes, withHeldBytes } from './held-contents.ts';
import { keptBytes, type WalkState } from './kept-bytes.ts';

/** A table of files a, b, c, ... with one second apart mtimes, nothing kept yet. */
function table(paths: string[]): FileTable {
  const n = paths.length;
  return {
    paths,
    size: Float64Array.from(paths.map(() => 3)),
    mtimeMs: Float64Array.from(paths.map((_, i) => 1_000 * (i + 1))),
    ctimeMs: Float64Array.from(paths.map((_, i) => 1_000 * (i + 1))),
    ino: Float64Array.from(paths.map((_, i) => i + 10)),
    mode: new Uint8Array(n),
    origin: new Uint8Array(n),
    lack: new Uint8Array(n),
    area: new Uint8Array(n),
    oids: new Uint8Array(n * 20),
    snapOffset: new Int32Array(n).fill(-1),
    snapLength: new Int32Array(n),
    binary: new Uint8Array(n),
    racy: new Uint8Array(n),
  };
}

/** A held checkpoint that kept each file's three bytes (its name twice and a newline). */
function held(paths: string[]): { files: FileTable; block: Buffer; state: WalkState | null } {
  const files = table(paths);
  const block = Buffer.from(paths.map((p) => `${p}${p}\n`).join(''));
  paths.forEach((_, i) => {
    files.origin[i] = ORIGIN_SNAPSHOT;
    files.snapOffset[i] = i * 3;
    files.snapLength[i] = 3;
  });
  return { files, block, state: null };
}

const bytesOf = (t: FileTable, block: Buffer, i: number) =>
  block.subarray(t.snapOffset[i], t.snapOffset[i]! + t.snapLength[i]!).toString();

describe('start contents from a held checkpoint', () => {
  it('a file with the lstat the held checkpoint recorded gets its bytes; one whose lstat moved is read', () => {
    const h = held(['a', 'b', 'c']);
    const now = table(['a', 'b', 'c', 'd']);
    now.mtimeMs[1] = 99_000; // b was written since
    const got = reuseHeldContents(now, [0, 1, 2, 3], h.files, (w) => w);
    expect(got.rest).toEqual([1, 3]);
    expect(got.granted).toBe(6);
    const block = withHeldBytes(now, got.copies, h, Buffer.from('READ'));
    expect(block.subarray(0, 4).toString()).toBe('READ');
    expect(bytesOf(now, block, 0)).toBe('aa\n');
    expect(bytesOf(now, block, 2)).toBe('cc\n');
    expect(now.origin[0]).toBe(ORIGIN_SNAPSHOT);
    expect(now.origin[1]).toBe(ORIGIN_NONE);
  });

  it('a file racy in the held checkpoint, or with another inode, mode or ctime, is read again', () => {
    const h = held(['a', 'b', 'c', 'd', 'e']);
    h.files.racy[0] = 1;
    const now = table(['a', 'b', 'c', 'd', 'e']);
    now.ino[1] = 77;
    now.mode[2] = 1;
    now.ctimeMs[3] = 5;
    const got = reuseHeldContents(now, [0, 1, 2, 3, 4], h.files, (w) => w);
    expect(got.rest).toEqual([0, 1, 2, 3]);
    expect(got.copies.map((c) => c.fi)).toEqual([4]);
  });

  it('a blob id alone is taken as it is, unless memory was short then (read again: there may be room now)', () => {
    const h = held(['big', 'short']);
    h.files.origin[0] = ORIGIN_HASH;
    h.files.lack[0] = LACK_TOO_LARGE;
    h.files.oids.fill(7, 0, 20);
    h.files.origin[1] = ORIGIN_HASH;
    h.files.lack[1] = LACK_MEMORY_CAP;
    const now = table(['big', 'short']);
    const got = reuseHeldContents(now, [0, 1], h.files, (w) => w);
    expect(got.rest).toEqual([1]);
    expect(now.origin[0]).toBe(ORIGIN_HASH);
    expect(now.lack[0]).toBe(LACK_TOO_LARGE);
    expect([...now.oids.subarray(0, 20)]).toEqual(Array(20).fill(7));
    expect(got.granted).toBe(0);
  });

  it('bytes past the memory grant are not copied: those files are read (control: a full grant copies all)', () => {
    const h = held(['a', 'b', 'c']);
    const short = table(['a', 'b', 'c']);
    const got = reuseHeldContents(short, [0, 1, 2], h.files, () => 4);
    expect(got.copies.map((c) => c.fi)).toEqual([0]);
    expect(got.rest).toEqual([1, 2]);
    const full = reuseHeldContents(table(['a', 'b', 'c']), [0, 1, 2], h.files, (w) => w);
    expect(full.copies.map((c) => c.fi)).toEqual([0, 1, 2]);
  });

  it('bytes held out of row order or with gaps land under the right rows, whether copied in runs or alone', () => {
    // The held block: c's bytes first, then a gap, then a and b one after the other.
    const h = held(['a', 'b', 'c', 'd']);
    h.files.snapOffset[2] = 0;
    h.files.snapOffset[0] = 5;
    h.files.snapOffset[1] = 8;
    h.files.snapOffset[3] = 11;
    const block = Buffer.from('cc\n..aa\nbb\ndd\n');
    // The new table has a row the held one lacks (x) between b and c, and d changed.
    const now = table(['a', 'b', 'x', 'c', 'd']);
    now.mtimeMs[2] = 42;
    now.mtimeMs[3] = 3_000;
    now.ctimeMs[3] = 3_000;
    now.ino[3] = 12;
    now.mtimeMs[4] = 99;
    const got = reuseHeldContents(now, [0, 1, 2, 3, 4], h.files, (w) => w);
    expect(got.rest).toEqual([2, 4]);
    const out = withHeldBytes(now, got.copies, { files: h.files, block, state: null }, Buffer.from('XX\n'));
    expect([0, 1, 3].map((i) => bytesOf(now, out, i))).toEqual(['aa\n', 'bb\n', 'cc\n']);
    expect(out.length).toBe(3 + 9);
  });

  it("shared, not copied: the rows refer to the held checkpoint's block, and a chain of shares reads the right bytes", () => {
    const r = held(['a', 'b', 'c']);
    // t1 shares a and c with the run's checkpoint r, and read b itself.
    const t1 = table(['a', 'b', 'c']);
    t1.mtimeMs[1] = 7;
    const got1 = reuseHeldContents(t1, [0, 1, 2], r.files, (w) => w);
    expect(got1.rest).toEqual([1]);
    const state1 = shareHeldBytes(t1, got1.copies, r)!;
    expect(state1.shared[0]).toBe(r.block); // the same buffer: nothing was copied
    t1.origin[1] = ORIGIN_SNAPSHOT;
    t1.snapOffset[1] = 0;
    t1.snapLength[1] = 3;
    const cp1 = { files: t1, block: Buffer.from('B1\n'), state: state1 };
    expect([0, 1, 2].map((i) => keptBytes(cp1, i).toString())).toEqual(['aa\n', 'B1\n', 'cc\n']);
    // t2 shares all three with t1: a and c live in r's block, b in t1's own.
    const t2 = table(['a', 'b', 'c']);
    t2.mtimeMs[1] = 7;
    const got2 = reuseHeldContents(t2, [0, 1, 2], t1, (w) => w);
    const state2 = shareHeldBytes(t2, got2.copies, cp1)!;
    expect(state2.shared).toEqual([cp1.block, r.block]);
    const cp2 = { files: t2, block: Buffer.alloc(0), state: state2 };
    expect([0, 1, 2].map((i) => keptBytes(cp2, i).toString())).toEqual(['aa\n', 'B1\n', 'cc\n']);
    // Copied instead (the fallback), the same bytes come out of both blocks.
    const t3 = table(['a', 'b', 'c']);
    t3.mtimeMs[1] = 7;
    const got3 = reuseHeldContents(t3, [0, 1, 2], t2, (w) => w);
    const own = withHeldBytes(t3, got3.copies, cp2, Buffer.alloc(0));
    expect([0, 1, 2].map((i) => keptBytes({ files: t3, block: own, state: null }, i).toString())).toEqual([
      'aa\n',
      'B1\n',
      'cc\n',
    ]);
  });

  it('a chain of shares longer than the bound is refused (the caller copies); nothing reused, nothing shared', () => {
    const h = held(['a']);
    const long = {
      ...h,
      state: { shared: Array.from({ length: MAX_SHARED_BLOCKS }, () => h.block), from: new Uint8Array(1) },
    };
    const now = table(['a']);
    const got = reuseHeldContents(now, [0], h.files, (w) => w);
    expect(shareHeldBytes(now, got.copies, long)).toBeNull();
    // Control: one block fewer is shared.
    const shorter = { ...long, state: { ...long.state, shared: long.state.shared.slice(1) } };
    expect(shareHeldBytes(table(['a']), got.copies, shorter)).not.toBeNull();
    expect(shareHeldBytes(table(['a']), [], h)).toBeNull();
  });

  it('nothing held: every file is read', () => {
    const now = table(['a']);
    expect(reuseHeldContents(now, [0], null, () => 0)).toEqual({ rest: [0], copies: [], granted: 0 });
  });
});
