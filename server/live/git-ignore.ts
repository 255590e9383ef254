import { listIgnored, runGit } from '../git/index.ts';
import { keyFromBytes, keyFromText, displayPath, splitNul } from '../workspace/index.ts';
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
      if (rels.length === 0) return rels;
      const input = Buffer.concat(rels.map((r) => Buffer.from(`${r}\0`, 'utf8')));
      const res = await runGit({
        cwd: root,
        args: ['check-ignore', '-z', '--stdin'],
        input,
        okExitCodes: [0, 1],
        timeoutMs: 5_000,
      });
      const ignored = new Set(splitNul(res.stdout).map(keyFromBytes));
      return rels.filter((r) => !ignored.has(keyFromText(r)));
    },
  };
}
