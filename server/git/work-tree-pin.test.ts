import { execFileSync, spawnSync } from 'node:child_process';
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

  it('a pointer file planted as a FIFO (a linked worktree`s commondir, a .git file) never blocks the search', () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    const elsewhere = createTempDir('rundiff-fifo-');
    onTestFinished(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
    const linked = path.join(elsewhere, 'linked');
    repo.git('worktree', 'add', '-q', linked);
    const gitDir = fs
      .readFileSync(path.join(linked, '.git'), 'utf8')
      .replace(/^gitdir: /, '')
      .trim();
    fs.rmSync(path.join(gitDir, 'commondir'));
    execFileSync('mkfifo', [path.join(gitDir, 'commondir')]);
    const fifoDotGit = path.join(elsewhere, 'plain');
    fs.mkdirSync(fifoDotGit);
    execFileSync('mkfifo', [path.join(fifoDotGit, '.git')]);
    // In a child process with a deadline: a search that opened a FIFO by name would block for good.
    const script = path.join(elsewhere, 'search.mts');
    fs.writeFileSync(
      script,
      `import { discoveredWorkTree } from ${JSON.stringify(new URL('./work-tree-pin.ts', import.meta.url).pathname)};\n` +
        `console.log(JSON.stringify([discoveredWorkTree(${JSON.stringify(linked)}), discoveredWorkTree(${JSON.stringify(fifoDotGit)})]));\n`,
    );
    const tsx = new URL('../../bin/tsx.js', import.meta.url).pathname;
    const res = spawnSync(process.execPath, [tsx, script], { encoding: 'utf8', timeout: 20_000 });
    expect(res.signal).toBeNull();
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    // Neither pointer could be read: no repository is found there (the search goes on above them).
    expect(JSON.parse(res.stdout)).toEqual([null, null]);
  });
});
