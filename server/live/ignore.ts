import fs from 'node:fs';
import path from 'node:path';
import { listIgnored, runGit } from '../git/index.ts';
import {
  createFsIgnore,
  displayPath,
  isSqliteSidecar,
  keyFromBytes,
  keyFromText,
  ownFilesUnder,
  splitNul,
  type ResolvedWorkspace,
} from '../workspace/index.ts';
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
      const candidates = rels.filter((r) => !isSqliteSidecar(keyFromText(r.slice(r.lastIndexOf('/') + 1))));
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

/** Outside git: the same default folders, file classes and root `.gitignore` as the checkpoint scan (B15). */
export function fsFeedIgnore(root: string): FeedIgnore {
  let gitignore: string | null = null;
  try {
    gitignore = fs.readFileSync(path.join(root, '.gitignore'), 'utf8');
  } catch {
    gitignore = null;
  }
  const rules = createFsIgnore(gitignore);
  const base = (rel: string) => rel.slice(rel.lastIndexOf('/') + 1);
  return {
    skipDir: (rel) => rules.ignoresDir(keyFromText(rel), keyFromText(base(rel))),
    keep: async (rels) => rels.filter((r) => !rules.ignoresFile(keyFromText(r), keyFromText(base(r)))),
  };
}

/** The rules for a resolved workspace, without the server's own database files. */
export async function feedIgnoreFor(workspace: ResolvedWorkspace, dbPath: string | null): Promise<FeedIgnore> {
  const inner = workspace.kind === 'git' ? await gitFeedIgnore(workspace.root) : fsFeedIgnore(workspace.root);
  const own = new Set(ownFilesUnder(workspace.root, dbPath));
  if (own.size === 0) return inner;
  return {
    skipDir: inner.skipDir,
    keep: async (rels) => inner.keep(rels.filter((r) => !own.has(r))),
  };
}
