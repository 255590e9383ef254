import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, onTestFinished, test } from 'vitest';
import { asUnprivileged, createTempDir } from '../test-support/index.ts';
import {
  UNREADABLE_CHANGING,
  UNREADABLE_DENIED,
  UNREADABLE_NOT_REGULAR,
  UNREADABLE_OUTSIDE_ROOT,
  blobId,
  readContents,
  type ReadRequest,
} from './read-contents.ts';

const request = (root: string, paths: string[], sizes: number[]): ReadRequest => ({
  root,
  paths,
  links: new Uint8Array(paths.length),
  sizes: Float64Array.from(sizes),
  keepMaxBytes: 1024,
  keepBudgetBytes: 1024,
  keepBinary: false,
  hashBudgetBytes: 1 << 20,
  hashKept: true,
});

test('B3: files that changed since the scan are read as they are now: shrunk (kept), grown (hashed only), replaced by a folder (unreadable, not gone)', () => {
  const root = createTempDir();
  onTestFinished(() => fs.rmSync(root, { recursive: true, force: true }));
  fs.writeFileSync(path.join(root, 'same.txt'), 'same\n');
  fs.writeFileSync(path.join(root, 'shrunk.txt'), 'ab\n');
  fs.writeFileSync(path.join(root, 'grown.txt'), 'much longer than the scan said\n');
  fs.mkdirSync(path.join(root, 'now-a-folder'));
  fs.writeFileSync(path.join(root, 'bin.dat'), Buffer.from([1, 0, 2]));
  // Sizes as an earlier scan saw them.
  const r = readContents(
    request(root, ['same.txt', 'shrunk.txt', 'grown.txt', 'now-a-folder', 'bin.dat'], [5, 10, 4, 3, 3]),
  );
  const kept = (i: number) => Buffer.from(r.block.subarray(r.offset[i], r.offset[i]! + r.length[i]!)).toString();
  expect(kept(0)).toBe('same\n');
  expect(kept(1)).toBe('ab\n');
  expect([...r.size]).toEqual([5, 3, 31, 3, 3]);
  // The grown file no longer fits the block sized from the scan: identity only.
  expect(r.offset[2]).toBe(-1);
  expect(Buffer.from(r.oids.subarray(40, 60))).toEqual(blobId(Buffer.from('much longer than the scan said\n')));
  expect(r.skippedForBudget).toBe(1);
  expect([...r.missing]).toEqual([0, 0, 0, 0, 0]);
  expect([...r.unreadable]).toEqual([0, 0, 0, UNREADABLE_NOT_REGULAR, 0]);
  // Binary (NUL in the head) is sniffed and, with keepBinary false, hashed rather than kept.
  expect(r.binary[4]).toBe(1);
  expect(r.offset[4]).toBe(-1);
  expect(r.hashed[4]).toBe(1);
});

test('a file swapped after the scan for a link, a FIFO, or a path through a folder now linking outside is unreadable and never read through; a vanished one is gone', () => {
  const base = createTempDir();
  onTestFinished(() => fs.rmSync(base, { recursive: true, force: true }));
  const root = path.join(base, 'ws');
  const outside = path.join(base, 'out');
  fs.mkdirSync(path.join(root, 'dir'), { recursive: true });
  fs.mkdirSync(outside);
  const secret = 'secret-outside-the-root\n';
  fs.writeFileSync(path.join(outside, 'f.txt'), secret);
  fs.writeFileSync(path.join(outside, 'linked.txt'), secret);
  // What the scan saw: four regular files of the secret's size.
  const names = ['linked.txt', 'fifo.txt', 'dir/f.txt', 'dir/g.txt', 'gone.txt'];
  fs.writeFileSync(path.join(outside, 'g.txt'), secret);
  // Now: a symlink to the secret, a FIFO, `dir` a symlink to the outside folder, nothing.
  fs.symlinkSync(path.join(outside, 'linked.txt'), path.join(root, 'linked.txt'));
  execFileSync('mkfifo', [path.join(root, 'fifo.txt')]);
  fs.rmSync(path.join(root, 'dir'), { recursive: true });
  fs.symlinkSync(outside, path.join(root, 'dir'));
  // Positive control: reading these names the usual way gets the secret.
  expect(fs.readFileSync(path.join(root, 'dir/f.txt'), 'utf8')).toBe(secret);
  expect(fs.readFileSync(path.join(root, 'linked.txt'), 'utf8')).toBe(secret);

  const r = readContents({
    ...request(
      root,
      names,
      names.map(() => secret.length),
    ),
    hashKept: true,
  });
  expect([...r.unreadable]).toEqual([
    UNREADABLE_CHANGING,
    UNREADABLE_NOT_REGULAR,
    UNREADABLE_OUTSIDE_ROOT,
    UNREADABLE_OUTSIDE_ROOT,
    0,
  ]);
  expect([...r.missing]).toEqual([0, 0, 0, 0, 1]);
  expect([...r.hashed]).toEqual([0, 0, 0, 0, 0]);
  expect([...r.offset]).toEqual([-1, -1, -1, -1, -1]);
  expect(Buffer.from(r.block).includes(secret)).toBe(false);
});

test('a symlink recorded by the scan is read as its own text; one whose folder now links outside is unreadable', () => {
  const base = createTempDir();
  onTestFinished(() => fs.rmSync(base, { recursive: true, force: true }));
  const root = path.join(base, 'ws');
  const outside = path.join(base, 'out');
  fs.mkdirSync(path.join(root, 'dir'), { recursive: true });
  fs.mkdirSync(outside);
  fs.symlinkSync('target-text', path.join(root, 'link'));
  fs.symlinkSync('outside-link-text', path.join(outside, 'l'));
  fs.rmSync(path.join(root, 'dir'), { recursive: true });
  fs.symlinkSync(outside, path.join(root, 'dir'));
  expect(fs.readlinkSync(path.join(root, 'dir/l'))).toBe('outside-link-text'); // control
  const req = request(root, ['link', 'dir/l'], [11, 17]);
  req.links = Uint8Array.from([1, 1]);
  const r = readContents(req);
  const kept = Buffer.from(r.block.subarray(r.offset[0], r.offset[0]! + r.length[0]!)).toString();
  expect(kept).toBe('target-text');
  expect([...r.unreadable]).toEqual([0, UNREADABLE_OUTSIDE_ROOT]);
  expect(Buffer.from(r.block).includes('outside-link-text')).toBe(false);
});

test('a file without read permission is unreadable (denied), not gone', () => {
  const root = createTempDir();
  onTestFinished(() => fs.rmSync(root, { recursive: true, force: true }));
  fs.chmodSync(root, 0o755);
  fs.writeFileSync(path.join(root, 'open.txt'), 'open\n');
  fs.writeFileSync(path.join(root, 'locked.txt'), 'locked\n');
  fs.chmodSync(path.join(root, 'locked.txt'), 0o000);
  // Positive control: this user really cannot read it.
  let denied = '';
  asUnprivileged(() => {
    try {
      fs.readFileSync(path.join(root, 'locked.txt'));
    } catch (err) {
      denied = (err as NodeJS.ErrnoException).code ?? '';
    }
  });
  expect(denied).toBe('EACCES');
  const r = asUnprivileged(() => readContents(request(root, ['open.txt', 'locked.txt'], [5, 7])));
  expect([...r.missing]).toEqual([0, 0]);
  expect([...r.unreadable]).toEqual([0, UNREADABLE_DENIED]);
  expect([...r.size]).toEqual([5, 7]);
});
