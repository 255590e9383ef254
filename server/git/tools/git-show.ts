import type { GitShowOutput } from '../../../shared/index.ts';
import { runGit } from '../runner.ts';
import type { ToolRun } from './context.ts';
import { collectDiff, pageOf, toDiffFile } from './diff-document.ts';
import { COMMIT_FORMAT, parseCommitFields } from './git-log.ts';
import { pathspecArgs, resolveToolPath } from './paths.ts';
import { emptyTree, resolveCommit } from './refs.ts';
import { objectFormat } from './repo-state.ts';

/**
 * `git_show`: one commit's metadata, its files and its patch (head first, within the default diff
 * budget). A merge is shown against its first parent, a root commit against the empty tree.
 */

export const SHOW_MAX_BYTES = 64 * 1024;

export interface GitShowArgs {
  ref: string;
  path?: string | undefined;
}

export async function gitShow(run: ToolRun, input: GitShowArgs): Promise<GitShowOutput> {
  const top = run.repo.top;
  const oid = await resolveCommit(top, input.ref);
  const pathKey = input.path === undefined ? null : resolveToolPath(top, input.path);
  const meta = await runGit({
    cwd: top,
    args: ['show', '-s', '--no-show-signature', '--no-color', `--format=${COMMIT_FORMAT}%x00%b`, oid],
    config: run.safety.config,
  });
  const fields = meta.stdout.toString('utf8').split('\0');
  const info = parseCommitFields(fields.slice(0, 6));
  const body = fields.slice(6).join('\0').replace(/\n+$/, '');
  const format = await objectFormat(top);
  const base = info.parents[0] ?? emptyTree(format);
  const doc = await collectDiff({
    top,
    config: run.safety.config,
    revArgs: [base, oid],
    pathspec: pathspecArgs(pathKey),
    untracked: false,
    worktreeSide: false,
    format,
    gitDir: run.repo.gitDir,
  });
  const page = pageOf(doc, 0, SHOW_MAX_BYTES);
  return {
    commit: { ...info, body },
    files: doc.files.map(toDiffFile),
    diff: page.diff,
    truncated: page.omitted.length > 0 || page.cut.next !== null,
  };
}
