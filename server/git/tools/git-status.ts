import fs from 'node:fs';
import path from 'node:path';
import type { GitStatusFile, GitStatusOutput, PorcelainLetter } from '../../../shared/index.ts';
import { displayPath } from '../../paths/index.ts';
import { runGit } from '../runner.ts';
import { parseStatusV2 } from './porcelain.ts';
import type { ToolRun } from './context.ts';

/** `git_status`: branch, upstream, ahead/behind, operation in progress and the changed files by state. */

/** The operation in progress in a git dir (a linked worktree has its own), or null. */
export function operationInProgress(gitDir: string): string | null {
  const has = (name: string) => fs.existsSync(path.join(gitDir, name));
  if (has('rebase-merge') || has('rebase-apply')) return 'rebase';
  if (has('MERGE_HEAD')) return 'merge';
  if (has('CHERRY_PICK_HEAD')) return 'cherry-pick';
  if (has('REVERT_HEAD')) return 'revert';
  if (has('BISECT_LOG')) return 'bisect';
  return null;
}

export async function gitStatus(run: ToolRun): Promise<GitStatusOutput> {
  const res = await runGit({
    cwd: run.repo.top,
    args: [
      'status',
      '--porcelain=v2',
      '-z',
      '--branch',
      '--untracked-files=all',
      '--renames',
      '--ignore-submodules=dirty',
    ],
    config: run.safety.config,
    timeoutMs: 30_000,
  });
  const report = parseStatusV2(res.stdout);
  const out: GitStatusOutput = {
    branch: report.head,
    upstream: report.upstream,
    ahead: report.ahead,
    behind: report.behind,
    detached: report.head === null,
    unborn: report.oid === null,
    in_progress: operationInProgress(run.repo.gitDir),
    clean: true,
    staged: [],
    unstaged: [],
    untracked: [],
    conflicted: [],
    files: [],
  };
  for (const e of report.entries) {
    if (e.kind === 'ignored') continue;
    const p = displayPath(e.path);
    const file: GitStatusFile = {
      path: p.path,
      old_path: e.oldPath === null ? null : displayPath(e.oldPath).path,
      index: e.x as PorcelainLetter,
      worktree: e.y as PorcelainLetter,
    };
    if (p.base64 !== undefined) file.path_base64 = p.base64;
    out.files.push(file);
    if (e.kind === 'untracked') out.untracked.push(p.path);
    else if (e.kind === 'unmerged') out.conflicted.push(p.path);
    else {
      if (e.x !== '.') out.staged.push(p.path);
      if (e.y !== '.') out.unstaged.push(p.path);
    }
  }
  out.clean = out.files.length === 0;
  return out;
}
