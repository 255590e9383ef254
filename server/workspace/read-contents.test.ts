import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';
import { createTempDir } from '../test-support/temp-repo.ts';
import { blobId, readContents, type ReadRequest } from './read-contents.ts';

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

test('B3: files that changed since the scan are read as they are now: shrunk (kept), grown (hashed only), replaced by a folder (missing)', () => {
  const root = createTempDir();
  fs.writeFileSync(path.join(root, 'same.txt'), 'same\n');
  fs.writeFileSync(path.join(root, 'shrunk.txt'), 'ab\n');
  fs.writeFileSync(path.join(root, 'grown.txt'), 'much longer than the scan said\n');
  fs.mkdirSync(path.join(root, 'now-a-folder'));
  fs.writeFileSync(path.join(root, 'bin.dat'), Buffer.from([1, 0, 2]));
  // Sizes as an earlier scan saw them.
  const r = readContents(
    request(root, ['same.txt', 'shrunk.txt', 'grown.txt', 'now-a-folder', 'bin.dat'], [5, 10, 4, 3, 3]),
  );
  const kept = (i: number) => Buffer.from(r.block.subarray(r.offset[i]!, r.offset[i]! + r.length[i]!)).toString();
  expect(kept(0)).toBe('same\n');
  expect(kept(1)).toBe('ab\n');
  expect([...r.size]).toEqual([5, 3, 31, 0, 3]);
  // The grown file no longer fits the block sized from the scan: identity only.
  expect(r.offset[2]).toBe(-1);
  expect(Buffer.from(r.oids.subarray(40, 60))).toEqual(blobId(Buffer.from('much longer than the scan said\n')));
  expect(r.skippedForBudget).toBe(1);
  expect([...r.missing]).toEqual([0, 0, 0, 1, 0]);
  // Binary (NUL in the head) is sniffed and, with keepBinary false, hashed rather than kept.
  expect(r.binary[4]).toBe(1);
  expect(r.offset[4]).toBe(-1);
  expect(r.hashed[4]).toBe(1);
  fs.rmSync(root, { recursive: true, force: true });
});
