import fs from 'node:fs';
import path from 'node:path';

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
  if (!st.isFile() || st.size > 64 * 1024) return false;
  let text: string;
  try {
    text = fs.readFileSync(dotGit, 'utf8');
  } catch {
    return false;
  }
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
  try {
    const text = fs.readFileSync(path.join(dir, 'commondir'), 'utf8').trim();
    return text === '' ? dir : path.resolve(dir, text);
  } catch {
    return dir;
  }
}
