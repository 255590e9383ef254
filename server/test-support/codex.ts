/**
 * Test fixture: the real Codex CLI (installed by `scripts/ensure-agent-cli.sh codex`), run offline
 * with `codex exec` against a scripted Responses API model (see scripted-openai-responses.ts).
 */
import { spawn } from 'node:child_process';
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

/**
 * Trusts every hook Codex lists for `cwd` as a person does at Codex's "Hooks need review" screen:
 * through Codex's own app server (`codex app-server`, JSON-RPC a line on stdio), `hooks/list` for
 * each hook's key and current hash, then `config/batchWrite` of `hooks.state."KEY".trusted_hash`
 * (what the screen's "Trust all and continue" writes to `~/.codex/config.toml`). Resolves with the
 * hooks' trust status as Codex reported it before.
 */
export async function trustCodexHooks(bin: string, home: string, cwd: string): Promise<string[]> {
  const child = spawn(bin, ['app-server'], {
    cwd,
    stdio: ['pipe', 'pipe', 'ignore'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
  });
  const waiting = new Map<number, (m: { result?: unknown; error?: unknown }) => void>();
  let buffered = '';
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString('utf8');
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      let m: { id?: number; result?: unknown; error?: unknown };
      try {
        m = JSON.parse(line) as typeof m;
      } catch {
        continue;
      }
      if (typeof m.id === 'number') waiting.get(m.id)?.(m);
    }
  });
  let next = 0;
  const call = async (method: string, params: unknown): Promise<unknown> => {
    const id = ++next;
    const answer = new Promise<{ result?: unknown; error?: unknown }>((resolve) => waiting.set(id, resolve));
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    const m = await answer;
    if (m.error !== undefined) throw new Error(`codex app-server ${method}: ${JSON.stringify(m.error)}`);
    return m.result;
  };
  try {
    await call('initialize', { clientInfo: { name: 'rundiff-test', version: '0' } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'initialized' })}\n`);
    const listed = (await call('hooks/list', { cwds: [cwd] })) as {
      data: { hooks: { key: string; currentHash: string; trustStatus: string }[] }[];
    };
    const hooks = listed.data.flatMap((d) => d.hooks);
    const quoted = (k: string) => JSON.stringify(k);
    await call('config/batchWrite', {
      edits: hooks.map((h) => ({
        keyPath: `hooks.state.${quoted(h.key)}.trusted_hash`,
        value: h.currentHash,
        mergeStrategy: 'upsert',
      })),
    });
    return hooks.map((h) => h.trustStatus);
  } finally {
    child.kill();
  }
}
