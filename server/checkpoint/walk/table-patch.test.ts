import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../../test-support/temp-repo.ts';
import { scanTree, type ScanTable } from '../../workspace/index.ts';
import { compareWalkOrder, patchTable, type StatRow } from './table-patch.ts';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
});

function tree(files: string[]): string {
  const dir = createTempDir();
  dirs.push(dir);
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), f);
  }
  return dir;
}

const walk = (root: string): ScanTable =>
  scanTree({
    root,
    starts: [''],
    pruneDirs: [],
    skipFiles: [],
    mode: 'filesystem',
    gitignoreText: null,
    maxFiles: 1_000_000,
    timeoutMs: 60_000,
  });

const rowsOf = (t: ScanTable): StatRow[] =>
  t.paths.map((p, i) => ({
    path: p,
    size: t.size[i]!,
    mtimeMs: t.mtimeMs[i]!,
    ctimeMs: t.ctimeMs[i]!,
    ino: t.ino[i]!,
    mode: t.mode[i]!,
  }));

const NAMES = ['a', 'a/z', 'a/b/c', 'a/b/d', 'a-b', 'a.txt', 'b/x', 'B', 'z', 'a/b0/e', 'a/b/c0/f', 'é/x', 'A/b'];

describe('a walk table brought up to date', () => {
  it('the order is the walk’s: a folder’s files first, names in byte order', () => {
    const files = ['top.txt', 'a/z', 'a/b/c', 'a/b/d', 'a-b', 'a.txt', 'b/x', 'B', 'z', 'a/b0/e', 'é/x', 'A/b'];
    const t = walk(tree(files));
    expect(t.paths.length).toBe(files.length);
    expect([...t.paths].sort(compareWalkOrder)).toEqual(t.paths);
    // Control: byte order alone is not the walk's.
    expect([...t.paths].sort()).not.toEqual(t.paths);
  });

  it('rows dropped and put in give the table a new walk gives, in its order', () => {
    const before = ['a/z', 'a/b/c', 'a/b/d', 'a-b', 'b/x', 'z', 'a/b0/e'];
    const root = tree(before);
    const base = walk(root);
    fs.rmSync(path.join(root, 'a/b/c'));
    fs.writeFileSync(path.join(root, 'a/b/d'), 'longer content');
    for (const f of ['a/b/c0/f', 'a/a', 'A/b', 'zz', 'a/b0/d']) {
      fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
      fs.writeFileSync(path.join(root, f), f);
    }
    const after = walk(root);
    const changed = new Set(['a/b/c', 'a/b/d', 'a/b/c0/f', 'a/a', 'A/b', 'zz', 'a/b0/d']);
    const patched = patchTable(
      base,
      changed,
      rowsOf(after).filter((r) => changed.has(r.path)),
    );
    expect(rowsOf(patched)).toEqual(rowsOf(after));
    expect(patched.paths).not.toEqual(base.paths);
  });

  it('a path compares equal only to itself', () => {
    for (const a of NAMES)
      for (const b of NAMES) {
        const c = compareWalkOrder(a, b);
        expect(c === 0, `${a} ${b}`).toBe(a === b);
        expect(Math.sign(compareWalkOrder(b, a)) + Math.sign(c), `${a} ${b}`).toBe(0);
      }
  });
});
