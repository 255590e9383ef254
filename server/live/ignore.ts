import { listIgnored, runGit } from '../git/index.ts';
import {
  createFsIgnore,
  isSqliteSidecar,
  isWatchCookie,
  ownFilesUnder,
  type ResolvedWorkspace,
} from '../workspace/index.ts';
import { displayPath, keyFromBytes, keyFromText, splitNul } from '../paths/index.ts';
import { readInside, safeRoot } from '../fs/index.ts';
import type { FeedIgnore } from './feed.ts';

/**
 * The feed's ignore rules in a git workspace: the watcher skips the folders git ignored at the
 * checkpoint, and each batch of touched paths is filtered by `git check-ignore` (which reads ignore
 * files only; tracked files are never reported ignored, as B14 wants).
 */
export async function gitFeedIgnore(root: string): Promise<FeedIgnore> {
  const { dirs } = await listIgnored(root, { timeoutMs: 5_000 });
  const skipped = new Set(dirs.map((d) => displayPath(d).path));
  return {
    skipDir: (rel) => skipped.has(rel),
    async keep(rels) {
      const candidates = rels.filter((r) => {
        const name = keyFromText(r.slice(r.lastIndexOf('/') + 1));
        return !isSqliteSidecar(name) && !isWatchCookie(name);
      });
      if (candidates.length === 0) return candidates;
      const input = Buffer.concat(candidates.map((r) => Buffer.from(`${r}\0`, 'utf8')));
      const res = await runGit({
        cwd: root,
        args: ['check-ignore', '-z', '--stdin'],
        input,
        okExitCodes: [0, 1],
        timeoutMs: 5_000,
      });
      const ignored = new Set(splitNul(res.stdout).map(keyFromBytes));
      return candidates.filter((r) => !ignored.has(keyFromText(r)));
    },
  };
}

/** A root `.gitignore` larger than this is not used by the feed (it only narrows a provisional list). */
const MAX_GITIGNORE_BYTES = 1024 * 1024;

/**
 * The root `.gitignore` as text, read like every workspace file: a symlink is not followed (git
 * does not follow one either), a FIFO does not block, nothing outside the root is read. Null when
 * there is no usable file; why is logged when one was there.
 */
function readRootGitignore(root: string, log?: (message: string) => void): string | null {
  let got;
  try {
    got = readInside(safeRoot(root), keyFromText('.gitignore'), MAX_GITIGNORE_BYTES);
  } catch (err) {
    log?.(`live feed: ${root}/.gitignore not read: ${(err as Error).message}`);
    return null;
  }
  if (got.kind === 'file') return got.bytes.toString('utf8');
  if (got.kind !== 'absent') {
    const why = got.kind === 'unreadable' ? got.reason : got.kind;
    log?.(`live feed: ${root}/.gitignore not used (${why})`);
  }
  return null;
}

/** Outside git: the same default folders, file classes and root `.gitignore` as the checkpoint scan (B15). */
export function fsFeedIgnore(root: string, log?: (message: string) => void): FeedIgnore {
  const rules = createFsIgnore(readRootGitignore(root, log));
  const base = (rel: string) => rel.slice(rel.lastIndexOf('/') + 1);
  return {
    skipDir: (rel) => rules.ignoresDir(keyFromText(rel), keyFromText(base(rel))),
    keep: async (rels) => rels.filter((r) => !rules.ignoresFile(keyFromText(r), keyFromText(base(r)))),
  };
}

/** The rules for a resolved workspace, without the server's own database files. */
export async function feedIgnoreFor(
  workspace: ResolvedWorkspace,
  dbPath: string | null,
  log?: (message: string) => void,
): Promise<FeedIgnore> {
  const inner = workspace.kind === 'git' ? await gitFeedIgnore(workspace.root) : fsFeedIgnore(workspace.root, log);
  const own = new Set(ownFilesUnder(workspace.root, dbPath));
  if (own.size === 0) return inner;
  return {
    skipDir: inner.skipDir,
    keep: async (rels) => inner.keep(rels.filter((r) => !own.has(r))),
  };
}
