import { execFileSync } from 'node:child_process';

/**
 * Trees deeper than one system call reaches (Linux: paths of 4,096 bytes or more), built, changed
 * and read by relative steps in a shell (`cd` one folder at a time), as a process in the workspace
 * can: the full path is never handed to a system call.
 */

/** Folder names making a path of about `bytes` bytes below the workspace (200-byte names). */
export function deepFolders(tag: string, bytes: number): string[] {
  return Array.from({ length: Math.ceil(bytes / 201) }, (_, i) => `${tag}${i}`.padEnd(200, 'd'));
}

/** Runs `script` in the folder `folders` below `dir`, reached (and made) one step at a time. */
export function inDeep(dir: string, folders: string[], script: string): void {
  execFileSync('bash', [
    '-c',
    `set -e; cd "$0"; for f in "$@"; do mkdir -p "$f"; cd "$f"; done; ${script}`,
    dir,
    ...folders,
  ]);
}

/** The text of `name` in the folder `folders` below `dir`; null when there is no such file. */
export function readDeep(dir: string, folders: string[], name: string): string | null {
  try {
    return execFileSync(
      'bash',
      ['-c', `set -e; cd "$0"; for f in "$@"; do cd "$f"; done; cat "${name}"`, dir, ...folders],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    );
  } catch {
    return null;
  }
}

/** Removes a deep tree (`rm` walks it by descriptor; Node's rm would name the full paths). */
export function removeDeep(dir: string): void {
  execFileSync('rm', ['-rf', dir]);
}
