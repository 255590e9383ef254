import { afterEach, describe, expect, it } from 'vitest';
import { createTempRepo, deepFolders, inDeep, readDeep, removeDeep, type TempRepo } from '../test-support/index.ts';
import { rows, runChange, testEngine } from '../test-support/engine-harness.ts';

/**
 * Files on paths longer than one system call takes (Linux: 4,096 bytes) are recorded like any
 * other. The trees are built and changed by relative steps (`deep-tree.ts`).
 */

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

describe.each([
  ['a git workspace', true],
  ['a plain folder', false],
])('long paths in %s', (_label, useGit) => {
  it('files on paths of ~4,200 and ~8,000 bytes modified, deleted and added are each recorded exactly, beside a short control', async () => {
    const repo: TempRepo = createTempRepo({ git: useGit, files: { 'short.txt': 'one\n' } });
    cleanups.push(() => removeDeep(repo.dir));
    const mid = deepFolders('m', 4200);
    const far = deepFolders('f', 8000);
    for (const folders of [mid, far])
      inDeep(repo.dir, folders, 'printf "before\\n" > edit.txt; printf "gone\\n" > drop.txt');
    const midKey = mid.join('/');
    const farKey = far.join('/');
    expect(Buffer.byteLength(`${repo.dir}/${midKey}/edit.txt`)).toBeGreaterThan(4200);
    expect(Buffer.byteLength(`${repo.dir}/${farKey}/edit.txt`)).toBeGreaterThan(8000);

    const { start, delta } = await runChange(testEngine(), repo.dir, () => {
      repo.write('short.txt', 'two\n');
      for (const folders of [mid, far])
        inDeep(repo.dir, folders, 'printf "after\\n" > edit.txt; rm drop.txt; printf "new\\n" > add.txt');
    });
    expect(readDeep(repo.dir, far, 'edit.txt')).toBe('after\n'); // the run really changed it
    expect(start.truncated).toBe(false);
    expect(delta.truncated_reasons).toEqual([]);
    expect(rows(delta)).toEqual([
      `A ${farKey}/add.txt +1 -0`,
      `D ${farKey}/drop.txt +0 -1`,
      `M ${farKey}/edit.txt +1 -1`,
      `A ${midKey}/add.txt +1 -0`,
      `D ${midKey}/drop.txt +0 -1`,
      `M ${midKey}/edit.txt +1 -1`,
      'M short.txt +1 -1',
    ]);
    const edit = delta.files.find((f) => f.path === `${farKey}/edit.txt`)!;
    expect(edit.patch).toContain(`--- a/${farKey}/edit.txt`);
    expect(edit.patch).toContain('-before\n+after\n');
  });

  it('a folder over 4,096 bytes made during the run: its files are recorded, the ignore rules above it applied, beside a short control', async () => {
    const repo: TempRepo = createTempRepo({
      git: useGit,
      files: { 'short.txt': 'one\n', '.gitignore': '*.log\ngen/\n' },
    });
    cleanups.push(() => removeDeep(repo.dir));
    const deep = deepFolders('n', 4300);
    // Twenty 200-byte folders, then one of 74 or 75 bytes: folder paths of 4,094 and 4,095 bytes
    // (git opens the first and lists its file itself; the second it cannot open).
    const common = deepFolders('b', 4000).slice(0, 20);
    const [edge, over] = ['e'.repeat(74), 'o'.repeat(75)];
    const { start, delta } = await runChange(testEngine(), repo.dir, () => {
      repo.write('short.txt', 'two\n');
      inDeep(
        repo.dir,
        deep,
        'printf "new\\n" > add.txt; printf "x\\n" > skip.log; mkdir sub; printf "y\\n" > sub/more.txt',
      );
      inDeep(repo.dir, ['gen', ...deepFolders('g', 4300)], 'printf "z\\n" > hidden.txt');
      inDeep(repo.dir, common, `mkdir ${edge} ${over}; printf "e\\n" > ${edge}/f.txt; printf "o\\n" > ${over}/f.txt`);
    });
    const key = deep.join('/');
    expect(Buffer.byteLength(`${common.join('/')}/${over}`)).toBe(4095);
    expect(start.truncated).toBe(false);
    expect(delta.truncated_reasons).toEqual([]);
    expect(rows(delta)).toEqual([
      `A ${common.join('/')}/${edge}/f.txt +1 -0`,
      `A ${common.join('/')}/${over}/f.txt +1 -0`,
      `A ${key}/add.txt +1 -0`,
      `A ${key}/sub/more.txt +1 -0`,
      'M short.txt +1 -1',
    ]);
  });

  it('a run that touches nothing reports nothing, long paths present', async () => {
    const repo: TempRepo = createTempRepo({ git: useGit, files: { 'short.txt': 'one\n' } });
    cleanups.push(() => removeDeep(repo.dir));
    inDeep(repo.dir, deepFolders('m', 4200), 'printf "x\\n" > keep.txt');
    const { delta } = await runChange(testEngine(), repo.dir, () => {});
    expect(rows(delta)).toEqual([]);
    expect(delta.truncated).toBe(false);
  });
});
