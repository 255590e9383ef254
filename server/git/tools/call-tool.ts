import type { z } from 'zod';
import type { GitToolName } from '../../../shared/index.ts';
import { AppError, toAppError } from '../../errors.ts';
import type { ToolContext, ToolRun } from './context.ts';
import { gitBranch } from './git-branch.ts';
import { gitCommit } from './git-commit.ts';
import { gitDiff } from './git-diff.ts';
import { gitLog } from './git-log.ts';
import { gitShow } from './git-show.ts';
import { gitStatus } from './git-status.ts';
import { resolveRepository } from './repositories.ts';
import { repoSafety } from './safety.ts';
import * as s from './schemas.ts';

/**
 * The transport-free entry point: `callTool(name, input, ctx)` validates the input, picks the
 * repository, runs the tool and returns the output or the AppError with the contract's code, plus
 * what a call log needs (duration, outcome, repository). It never throws.
 */

export interface ToolDefinition {
  name: GitToolName;
  title: string;
  description: string;
  input: z.ZodType;
  output: z.ZodType;
  readOnly: boolean;
  destructive: boolean;
  run(run: ToolRun, input: never): Promise<unknown>;
}

function define<I extends z.ZodType, O extends z.ZodType>(d: {
  name: GitToolName;
  title: string;
  description: string;
  input: I;
  output: O;
  readOnly: boolean;
  run: (run: ToolRun, input: z.output<I>) => Promise<z.output<O>>;
}): ToolDefinition {
  // A commit rewrites the index entries of its paths: clients should confirm it.
  return { ...d, destructive: !d.readOnly, run: d.run };
}

export const GIT_TOOLS: readonly ToolDefinition[] = [
  define({
    name: 'git_status',
    title: 'Git status',
    description:
      'Branch, upstream, ahead/behind, operation in progress, and the changed files: staged, unstaged (a partially staged file is in both), untracked (one by one) and conflicted.',
    input: s.gitStatusInput,
    output: s.gitStatusOutput,
    readOnly: true,
    run: (run) => gitStatus(run),
  }),
  define({
    name: 'git_diff',
    title: 'Git diff',
    description:
      'Unified diff. Default: work tree against the index, untracked files included as new files; staged: true = what the next commit takes. The file list is always complete; the patch is paged (max_bytes, then offset = next_offset). Files in omitted were not shown. Review with this before git_commit.',
    input: s.gitDiffInput,
    output: s.gitDiffOutput,
    readOnly: true,
    run: (run, input) => gitDiff(run, input),
  }),
  define({
    name: 'git_log',
    title: 'Git log',
    description:
      'Commits newest first (hash, parents, author, ISO date, subject), optionally for a range and/or a path.',
    input: s.gitLogInput,
    output: s.gitLogOutput,
    readOnly: true,
    run: (run, input) => gitLog(run, input),
  }),
  define({
    name: 'git_show',
    title: 'Git show',
    description:
      'One commit: metadata and message body, its files with line counts, and its patch (first 64 KiB; a merge against its first parent).',
    input: s.gitShowInput,
    output: s.gitShowOutput,
    readOnly: true,
    run: (run, input) => gitShow(run, input),
  }),
  define({
    name: 'git_branch',
    title: 'Git branches',
    description: 'The current branch (null when detached) and every local branch with its upstream.',
    input: s.gitBranchInput,
    output: s.gitBranchOutput,
    readOnly: true,
    run: (run) => gitBranch(run),
  }),
  define({
    name: 'git_commit',
    title: 'Git commit',
    description:
      'Commit, after review. Without paths: commits the staged set, which a git_diff with staged: true must have shown in this session. With paths: stages and commits exactly the changes under them, which a git_diff must have shown. Any change after the review makes it stale; one review allows one commit. Hooks never run.',
    input: s.gitCommitInput,
    output: s.gitCommitOutput,
    readOnly: false,
    run: (run, input) => gitCommit(run, input),
  }),
];

export function findTool(name: string): ToolDefinition | undefined {
  return GIT_TOOLS.find((t) => t.name === name);
}

export type ToolCallResult =
  | { ok: true; tool: string; output: unknown; repository: string | null; duration_ms: number }
  | { ok: false; tool: string; error: AppError; repository: string | null; duration_ms: number };

export function invalidInput(error: z.ZodError): AppError {
  const issues = error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  const first = issues[0];
  return new AppError('invalid_input', first ? `${first.path || 'input'}: ${first.message}` : 'invalid input', {
    hint: 'Check the tool input schema.',
    details: { issues },
  });
}

export async function callTool(name: string, input: unknown, ctx: ToolContext): Promise<ToolCallResult> {
  const started = performance.now();
  let repository: string | null = null;
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
  try {
    const tool = findTool(name);
    if (!tool) {
      throw new AppError('not_found', `unknown tool ${JSON.stringify(name)}`, {
        details: { tools: GIT_TOOLS.map((t) => t.name) },
      });
    }
    const parsed = tool.input.safeParse(input ?? {});
    if (!parsed.success) throw invalidInput(parsed.error);
    const args = parsed.data as { repository?: string };
    const repo = await resolveRepository(ctx.repositories, args.repository);
    repository = repo.label;
    const safety = await repoSafety(repo.top);
    const output = await tool.run({ ctx, repo, safety }, parsed.data as never);
    return { ok: true, tool: name, output, repository, duration_ms: elapsed() };
  } catch (err) {
    return { ok: false, tool: name, error: toAppError(err), repository, duration_ms: elapsed() };
  }
}
