/**
 * Test fixture: the real opencode CLI (installed by `scripts/ensure-agent-cli.sh opencode`), run
 * offline with `opencode run PROMPT` against a scripted chat-completions model (see
 * scripted-openai-chat.ts), configured through the workspace's `opencode.json`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runAgentCli, type AgentRun } from './agent-cli.ts';

/** The version the agent tests were written and checked against. */
export const OPENCODE_VERSION = '1.18.33';

export interface OpencodeOptions {
  bin: string;
  cwd: string;
  /** A temp folder: opencode keeps its sessions, config and caches under HOME. */
  home: string;
  /** Continue the last session of the folder (`--continue`). */
  resume?: boolean;
}

/**
 * The workspace's `opencode.json`: an OpenAI-compatible provider at `modelUrl` (opencode fetches
 * its `@ai-sdk/openai-compatible` package from the registry on first use), edits and shell allowed
 * without asking, no sharing or update checks, and `mcp` local servers by name.
 */
export function writeOpencodeConfig(workspace: string, modelUrl: string, mcp: Record<string, string[]> = {}): void {
  const config = {
    provider: {
      scripted: {
        npm: '@ai-sdk/openai-compatible',
        options: { baseURL: `${modelUrl}/v1`, apiKey: 'offline-test-key' },
        // Priced per million tokens, as opencode's model entries are: opencode then prices each
        // model call (its step-finish parts' `cost`), which the plugin reports.
        models: { m: { name: 'm', cost: { input: 3, output: 15 } } },
      },
    },
    model: 'scripted/m',
    small_model: 'scripted/m',
    permission: { edit: 'allow', bash: 'allow' },
    autoupdate: false,
    share: 'disabled',
    mcp: Object.fromEntries(Object.entries(mcp).map(([name, command]) => [name, { type: 'local', command }])),
  };
  fs.writeFileSync(path.join(workspace, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`);
}

/** `opencode run PROMPT [--continue]`, stdin closed. */
export function runOpencode(prompt: string, opts: OpencodeOptions): Promise<AgentRun> {
  const args = ['run', ...(opts.resume ? ['--continue'] : []), prompt];
  return runAgentCli(opts.bin, args, opts.cwd, {
    HOME: opts.home,
    // opencode takes the project folder from $PWD, not from the process's working directory.
    PWD: opts.cwd,
    OPENCODE_DISABLE_AUTOUPDATE: '1',
  });
}
