import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createTempDir, createTempRepo } from '../test-support/index.ts';
import { discoveredWorkTree } from './work-tree-pin.ts';

/** The work tree the runner pins is the folder git's own upward search finds `.git` in. */
describe('discoveredWorkTree', () => {
  it('is the folder holding .git from the top, a subfolder and a linked worktree; none inside .git or outside a repository', () => {
    const repo = createTempRepo({ files: { 'sub/a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    const top = fs.realpathSync(repo.dir);
    const elsewhere = createTempDir('rundiff-elsewhere-');
    onTestFinished(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
    repo.git('config', 'core.worktree', elsewhere);
    expect(discoveredWorkTree(repo.dir)).toBe(top);
    expect(discoveredWorkTree(path.join(repo.dir, 'sub'))).toBe(top);
    expect(discoveredWorkTree(path.join(repo.dir, '.git', 'objects'))).toBeNull();
    expect(discoveredWorkTree(elsewhere)).toBeNull();
    expect(discoveredWorkTree(path.join(repo.dir, 'missing'))).toBeNull();
    repo.git('config', '--unset', 'core.worktree');
    const linked = path.join(elsewhere, 'linked');
    repo.git('worktree', 'add', '-q', linked);
    expect(discoveredWorkTree(path.join(linked, 'sub'))).toBe(fs.realpathSync(linked));
  });
});
