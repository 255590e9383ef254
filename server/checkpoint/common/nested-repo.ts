import fs from 'node:fs';
import path from 'node:path';
import { findRepo, type RepoInfo } from '../../git/index.ts';
import type { PathKey } from '../../paths/index.ts';
import type { GitArea } from '../model.ts';

/** A folder holding `.git` found in a workspace: its own repository when git says it is the top level of one. */
export async function nestedArea(
  root: string,
  rel: PathKey,
  timeoutMs: number,
): Promise<{ area: GitArea; gitDir: string; repo: RepoInfo } | null> {
  const cwd = path.join(root, Buffer.from(rel, 'latin1').toString());
  const repo = await findRepo(cwd, { timeoutMs });
  if (!repo) return null;
  let real: string;
  try {
    real = fs.realpathSync(cwd);
  } catch {
    return null;
  }
  if (repo.topLevel !== real) return null;
  return { area: { prefix: rel + '/', cwd }, gitDir: repo.gitDir, repo };
}
