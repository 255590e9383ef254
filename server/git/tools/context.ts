import type { CommitPlan } from '../../../shared/index.ts';
import type { RepositoryCatalog, ToolRepo } from './repositories.ts';
import type { ToolSession } from './review.ts';
import type { RepoSafety } from './safety.ts';

/**
 * A person's decision on a commit plan (`serve --require-commit-approval`): resolves to let the commit
 * go ahead, rejects with an AppError `approval_denied` / `approval_timeout` to stop it. `repository.root`
 * is the repository's top folder, to find the session at work there when the caller named none.
 */
export type ApproveCommit = (plan: CommitPlan, repository: { root: string }) => Promise<void>;

/** What a tool call runs with; the transport (MCP connection, REST request) builds it. */
export interface ToolContext {
  /** The commit gate's memory: one per MCP connection or REST `tool_session`. */
  session: ToolSession;
  repositories: RepositoryCatalog;
  /** Asked before `git_commit` writes anything, when set. */
  approve?: ApproveCommit;
  /** Environment and home folder used to find the committer's identity. Default: this process's. */
  env?: Readonly<Record<string, string | undefined>>;
  homeDir?: string;
}

/** What a tool handler gets: its repository, opened, and that repository's safety overrides. */
export interface ToolRun {
  ctx: ToolContext;
  repo: ToolRepo;
  safety: RepoSafety;
}
