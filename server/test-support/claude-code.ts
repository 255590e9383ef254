/**
 * Test fixture: the real Claude Code CLI, installed once per machine outside the repository by
 * `scripts/ensure-agent-cli.sh claude-code`, run offline against a scripted model (see
 * scripted-anthropic.ts), started asynchronously like every agent CLI (see agent-cli.ts).
 */
import { agentCliSupported, ensureAgentCli, installAgentHooks, runAgentCli, type AgentRun } from './agent-cli.ts';

/** The version the agent tests were written and checked against. */
export const CLAUDE_CODE_VERSION = '2.1.328';

/** Only this platform has the binary the install script fetches. */
export const claudeCodeSupported = agentCliSupported;

/** Installs the CLI when missing (about 370 MB, once per machine) and resolves with its path. */
export function ensureClaudeCode(): Promise<string> {
  return ensureAgentCli('claude-code');
}

export type ClaudeCodeRun = AgentRun;

export interface ClaudeCodeOptions {
  bin: string;
  cwd: string;
  /** A temp folder: the CLI keeps its sessions and user settings under HOME. */
  home: string;
  /** The scripted model's URL. */
  modelUrl: string;
  /** Extra arguments after the prompt (e.g. `--continue`). */
  args?: string[];
}

/** Runs `claude -p PROMPT` offline with edits accepted and Bash allowed; stdin closed. */
export function runClaudeCode(prompt: string, opts: ClaudeCodeOptions): Promise<ClaudeCodeRun> {
  const args = ['-p', prompt, ...(opts.args ?? [])];
  args.push('--permission-mode', 'acceptEdits', '--allowedTools', 'Bash', '--model', 'claude-sonnet-4-5');
  return runAgentCli(opts.bin, args, opts.cwd, {
    HOME: opts.home,
    ANTHROPIC_BASE_URL: opts.modelUrl,
    ANTHROPIC_API_KEY: 'offline-test-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  });
}

/** `rundiff hooks install claude-code --workspace WS --server URL` through the real command line. */
export function installClaudeCodeHooks(
  workspace: string,
  serverUrl: string,
  home: string,
  extra: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return installAgentHooks('claude-code', workspace, serverUrl, home, extra);
}
