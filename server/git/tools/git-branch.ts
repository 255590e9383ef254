import type { GitBranchOutput } from '../../../shared/index.ts';
import { readHead } from '../repo.ts';
import { runGit } from '../runner.ts';
import type { ToolRun } from './context.ts';

/** `git_branch`: the current branch (null when detached) and every local branch with its upstream. */
export async function gitBranch(run: ToolRun): Promise<GitBranchOutput> {
  const [head, refs] = await Promise.all([
    readHead(run.repo.top),
    runGit({
      cwd: run.repo.top,
      args: ['for-each-ref', '--format=%(refname)%00%(upstream:short)', 'refs/heads/'],
      config: run.safety.config,
    }),
  ]);
  const branches: GitBranchOutput['branches'] = [];
  // Ref names cannot hold a newline or NUL, so one line per branch and NUL between fields is exact.
  for (const line of refs.stdout.toString('utf8').split('\n')) {
    if (line === '') continue;
    const [ref = '', upstream = ''] = line.split('\0');
    branches.push({ name: ref.replace(/^refs\/heads\//, ''), upstream: upstream === '' ? null : upstream });
  }
  return { current: head.branch, detached: head.detached, branches };
}
