import fs from 'node:fs';
import path from 'node:path';
import { readRegularFile } from '../fs/index.ts';

/** A `.git` file or a `commondir` file holds one path: anything longer is not one. */
const POINTER_MAX_BYTES = 64 * 1024;

/**
 * The work tree git must use for a call run in `cwd`, found the way git discovers a repository
 * (from `cwd` upward, the first folder holding a `.git` folder or `.git` file; a folder that is a
 * git directory itself stops the search) but without reading the repository's config. git honours
 * a `core.worktree` planted in `.git/config` over the folder it found `.git` in; `GIT_WORK_TREE`
 * wins over that setting, while git still discovers the git directory itself (and still refuses a
 * repository of dubious ownership). Null when there is nothing to pin (no repository, or a bare one).
 */
export function discoveredWorkTree(cwd: string): string | null {
  let dir: string;
  try {
    dir = fs.realpathSync(cwd);
  } catch {
    return null;
  }
  for (;;) {
    if (holdsGitEntry(dir)) return dir;
    if (isGitDirectory(dir)) return null;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** `dir/.git` is a git directory, or a file naming one (`gitdir: <path>`, a linked worktree or submodule). */
function holdsGitEntry(dir: string): boolean {
  const dotGit = path.join(dir, '.git');
  let st: fs.Stats;
  try {
    st = fs.statSync(dotGit);
  } catch {
    return false;
  }
  if (st.isDirectory()) return isGitDirectory(dotGit);
  // Read through what was opened, not by name after the stat: a FIFO swapped in cannot hang the server.
  const text = readRegularFile(dotGit, POINTER_MAX_BYTES)?.toString('utf8');
  if (text === undefined) return false;
  const m = /^gitdir: (.+?)\s*$/m.exec(text);
  return m !== null && isGitDirectory(path.resolve(dir, m[1]!));
}

/** What git's `is_git_directory` checks: a HEAD, an object store and a refs folder. */
function isGitDirectory(dir: string): boolean {
  const commonDir = readCommonDir(dir);
  return ['HEAD', path.join(commonDir, 'objects'), path.join(commonDir, 'refs')].every((p) =>
    fs.existsSync(path.resolve(dir, p)),
  );
}

/** A linked worktree's git dir keeps objects and refs in the common dir named by its `commondir` file. */
function readCommonDir(dir: string): string {
  const text = readRegularFile(path.join(dir, 'commondir'), POINTER_MAX_BYTES)?.toString('utf8').trim();
  return text === undefined || text === '' ? dir : path.resolve(dir, text);
}
