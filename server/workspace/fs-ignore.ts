import ignore from 'ignore';
import type { PathKey } from '../paths/index.ts';

/**
 * What a non-git workspace skips (B15): well-known dependency/build/cache folders, binary and
 * database file classes, and the root `.gitignore` as best effort. SQLite sidecars are skipped in
 * both kinds of workspace. Pure: runs inside the scan worker.
 */

export const DEFAULT_IGNORED_DIRS: readonly string[] = Object.freeze([
  '.git',
  'node_modules',
  'dist',
  'build',
  'target',
  '.gradle',
  '.mvn',
  '.venv',
  'venv',
  '__pycache__',
  '.pytest_cache',
  '.cache',
  'coverage',
]);

/** File classes by extension. Matched case-insensitively: `LOGO.PNG` is as binary as `logo.png`. */
export const DEFAULT_IGNORED_FILE_EXTENSIONS: readonly string[] = Object.freeze([
  '.pyc',
  '.class',
  '.o',
  '.so',
  '.dylib',
  '.dll',
  '.exe',
  '.png',
  '.jpg',
  '.jpeg',
  '.gif',
  '.webp',
  '.zip',
  '.tar',
  '.sqlite',
  '.db',
]);

const SIDECAR_SUFFIXES = ['-wal', '-shm', '-journal'];

/** SQLite write-ahead log, shared-memory and rollback journal files (skipped in every workspace). */
export function isSqliteSidecar(name: PathKey): boolean {
  return SIDECAR_SUFFIXES.some((s) => name.length > s.length && name.endsWith(s));
}

/** The sync cookie a checkpoint watcher writes in a workspace folder for a moment (never reported). */
export function watchCookieName(pid: number, seq: number): PathKey {
  return `.rundiff-sync-${pid}-${seq}`;
}

const COOKIE = /^\.rundiff-sync-\d+-\d+$/;
export function isWatchCookie(name: PathKey): boolean {
  return COOKIE.test(name);
}

export interface FsIgnoreRules {
  /** `rel` is the folder's path from the workspace root, `name` its last component. */
  ignoresDir(rel: PathKey, name: PathKey): boolean;
  ignoresFile(rel: PathKey, name: PathKey): boolean;
}

const ignoredDirs = new Set<string>(DEFAULT_IGNORED_DIRS);

function hasIgnoredExtension(name: PathKey): boolean {
  const lower = name.toLowerCase();
  return DEFAULT_IGNORED_FILE_EXTENSIONS.some((ext) => lower.length > ext.length && lower.endsWith(ext));
}

/** The non-git rules, with the root `.gitignore` text when there is one (patterns that fail to parse are skipped). */
export function createFsIgnore(gitignoreText: string | null): FsIgnoreRules {
  let matcher: ReturnType<typeof ignore> | null = null;
  if (gitignoreText) {
    matcher = ignore({ allowRelativePaths: true });
    for (const line of gitignoreText.split(/\r?\n/)) {
      try {
        matcher.add(line);
      } catch {
        // best effort: one bad pattern does not disable the rest
      }
    }
  }
  const byGitignore = (rel: PathKey, dir: boolean): boolean => {
    if (!matcher) return false;
    try {
      const text = Buffer.from(rel, 'latin1').toString('utf8');
      return matcher.ignores(dir ? `${text}/` : text);
    } catch {
      return false;
    }
  };
  return {
    ignoresDir: (rel, name) => ignoredDirs.has(name) || byGitignore(rel, true),
    ignoresFile: (rel, name) =>
      isSqliteSidecar(name) || isWatchCookie(name) || hasIgnoredExtension(name) || byGitignore(rel, false),
  };
}
