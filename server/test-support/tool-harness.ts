import { AppError } from '../errors.ts';
import { callTool, createWorkspaceCatalog, ToolSession, type ToolContext } from '../git/tools/index.ts';
import type { TempRepo } from './temp-repo.ts';

/** Test helper: the tools on real temporary repositories, one tool session per harness. */
export interface ToolHarness {
  ctx: ToolContext;
  /** The output of a call that must succeed. */
  call<T = Record<string, unknown>>(name: string, input?: Record<string, unknown>): Promise<T>;
  /** The error of a call that must fail. */
  fail(name: string, input?: Record<string, unknown>): Promise<AppError>;
}

export function toolHarness(repo: TempRepo | string, extra: Partial<ToolContext> = {}): ToolHarness {
  const dir = typeof repo === 'string' ? repo : repo.dir;
  const ctx: ToolContext = {
    session: new ToolSession(),
    repositories: createWorkspaceCatalog({ workspaces: [dir] }),
    env: {},
    homeDir: '/nonexistent-home',
    ...extra,
  };
  return {
    ctx,
    async call<T>(name: string, input: Record<string, unknown> = {}) {
      const r = await callTool(name, input, ctx);
      if (!r.ok)
        throw new Error(`${name} failed: ${r.error.code}: ${r.error.message} ${JSON.stringify(r.error.details ?? {})}`);
      return r.output as T;
    },
    async fail(name: string, input: Record<string, unknown> = {}) {
      const r = await callTool(name, input, ctx);
      if (r.ok) throw new Error(`${name} succeeded unexpectedly: ${JSON.stringify(r.output).slice(0, 500)}`);
      return r.error;
    },
  };
}

/** A repository with a committer identity in its own config (the tools never read the test runner's). */
export function withIdentity(repo: TempRepo): TempRepo {
  repo.git('config', 'user.name', 'Agent');
  repo.git('config', 'user.email', 'agent@example.invalid');
  return repo;
}

export { AppError };
