/**
 * Test fixture: the real Codex CLI (installed by `scripts/ensure-agent-cli.sh codex`), run offline
 * with `codex exec` against a scripted Responses API model (see scripted-openai-responses.ts).
 */
import { runAgentCli, type AgentRun } from './agent-cli.ts';

/** The version the agent tests were written and checked against. */
export const CODEX_VERSION = '0.169.0';

/** A model in Codex 0.169.0's bundled catalog, so its real tool set (apply_patch included) is offered. */
export const CODEX_MODEL = 'gpt-5.5';

export interface CodexOptions {
  bin: string;
  cwd: string;
  /** A temp folder: Codex keeps its sessions and `~/.codex/hooks.json` under HOME. */
  home: string;
  /** The scripted model's URL. */
  modelUrl: string;
  /** Run the hooks without Codex's trust review (`--dangerously-bypass-hook-trust`). */
  trustHooks: boolean;
  /** Continue the last session (`codex exec resume --last`). */
  resume?: boolean;
}

/** `codex exec [resume --last] PROMPT` in workspace-write mode against the scripted provider. */
export function runCodex(prompt: string, opts: CodexOptions): Promise<AgentRun> {
  const args = ['exec', '--skip-git-repo-check'];
  if (opts.trustHooks) args.push('--dangerously-bypass-hook-trust');
  args.push('-s', 'workspace-write', '-c', 'model_provider=fake');
  args.push(
    '-c',
    `model_providers.fake={name="fake",base_url="${opts.modelUrl}/v1",wire_api="responses",env_key="FAKE_KEY"}`,
  );
  // A model of Codex's own catalog: with it Codex offers its apply_patch tool (an unknown model gets
  // fallback metadata without it).
  args.push('-m', CODEX_MODEL, ...(opts.resume ? ['resume', '--last'] : []), prompt);
  return runAgentCli(opts.bin, args, opts.cwd, { HOME: opts.home, FAKE_KEY: 'offline-test-key' });
}
