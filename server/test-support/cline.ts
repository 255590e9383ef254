/**
 * Test fixture: the real Cline CLI (installed by `scripts/ensure-agent-cli.sh cline`), run offline
 * against a scripted chat-completions model (see scripted-openai-chat.ts). Two prompts of one
 * session need Cline's Agent Client Protocol mode (`cline --acp`, JSON-RPC over stdio): `cline
 * PROMPT` starts a new session each time, and `cline --id SESSION` resumes one only in its terminal
 * interface (it drops the prompt argument). Each run leaves a `cline --cline-hub-daemon` behind,
 * which `stopClineHubDaemon` ends.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runAgentCli, type AgentRun } from './agent-cli.ts';

/** The version the agent tests were written and checked against. */
export const CLINE_VERSION = '3.0.65';

export interface ClineOptions {
  bin: string;
  cwd: string;
  /** A temp folder: Cline keeps its settings, sessions and `~/.cline/hooks` under HOME. */
  home: string;
}

/** The environment Cline runs with: HOME, and an API key so that its ACP mode needs no sign-in. */
const clineEnv = (home: string) => ({
  HOME: home,
  CLINE_API_KEY: 'offline-test-key',
  CLINE_PROVIDER: 'openai-compatible',
});

/** `cline auth`: the scripted model as Cline's OpenAI-compatible provider, stored under HOME. */
export function configureClineModel(opts: ClineOptions, modelUrl: string): Promise<AgentRun> {
  const args = ['auth', '-p', 'openai', '-k', 'offline-test-key', '-m', 'm', '-b', `${modelUrl}/v1`];
  return runAgentCli(opts.bin, args, opts.cwd, clineEnv(opts.home));
}

/** Cline's MCP servers (`~/.cline/data/settings/cline_mcp_settings.json`), each a command line. */
export function writeClineMcpSettings(home: string, servers: Record<string, string[]>): void {
  const dir = path.join(home, '.cline', 'data', 'settings');
  fs.mkdirSync(dir, { recursive: true });
  const mcpServers = Object.fromEntries(
    Object.entries(servers).map(([name, [command, ...args]]) => [name, { command, args }]),
  );
  fs.writeFileSync(path.join(dir, 'cline_mcp_settings.json'), JSON.stringify({ mcpServers }, null, 2));
}

interface RpcMessage {
  id?: number;
  method?: string;
  params?: { options?: { optionId?: string; kind?: string }[] };
  result?: unknown;
  error?: { message?: string };
}

export interface ClineAcp {
  /** `session/new` in the workspace; resolves with Cline's session id. */
  newSession(): Promise<string>;
  /** `session/prompt` with one text; resolves with the turn's stop reason. */
  prompt(sessionId: string, text: string): Promise<string>;
  /** The reply text Cline streamed for each prompt, in order. */
  replies: string[];
  stderr(): string;
  /** Ends the ACP process (stdin closed) and waits for it. */
  close(): Promise<void>;
}

/** Starts `cline --acp --auto-approve true` in the workspace and initializes the protocol. */
export async function startClineAcp(opts: ClineOptions): Promise<ClineAcp> {
  const child: ChildProcessWithoutNullStreams = spawn(opts.bin, ['--acp', '--auto-approve', 'true', '-c', opts.cwd], {
    cwd: opts.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...clineEnv(opts.home) },
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const pending = new Map<number, { resolve: (m: RpcMessage) => void; reject: (e: Error) => void }>();
  const replies: string[] = [];
  let reply = '';
  let stderr = '';
  let nextId = 0;
  let buffer = '';
  const send = (m: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  child.stdout.on('data', (d: Buffer) => {
    buffer += d.toString('utf8');
    for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
      const line = buffer.slice(0, i).trim();
      buffer = buffer.slice(i + 1);
      if (!line.startsWith('{')) continue;
      const m = JSON.parse(line) as RpcMessage & {
        params?: { update?: { sessionUpdate?: string; content?: { text?: string } } };
      };
      if (m.method === 'session/request_permission' && m.id !== undefined) {
        // Auto-approve is on; should Cline still ask, the first "allow" option is taken.
        const option = m.params?.options?.find((o) => o.kind?.startsWith('allow')) ?? m.params?.options?.[0];
        send({ id: m.id, result: { outcome: { outcome: 'selected', optionId: option?.optionId } } });
      } else if (m.method === 'session/update') {
        const update = m.params?.update;
        if (update?.sessionUpdate === 'agent_message_chunk') reply += update.content?.text ?? '';
      } else if (m.id !== undefined && !m.method) {
        pending.get(m.id)?.resolve(m);
        pending.delete(m.id);
      }
    }
  });
  child.on('close', () => {
    for (const p of pending.values()) p.reject(new Error(`cline --acp exited: ${stderr.slice(-2000)}`));
    pending.clear();
  });
  const call = (method: string, params: object): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, {
        resolve: (m) => (m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result)),
        reject,
      });
      send({ id, method, params });
    });
  await call('initialize', {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  return {
    async newSession() {
      const r = (await call('session/new', { cwd: opts.cwd, mcpServers: [] })) as { sessionId: string };
      return r.sessionId;
    },
    async prompt(sessionId, text) {
      reply = '';
      const r = (await call('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })) as {
        stopReason: string;
      };
      replies.push(reply);
      return r.stopReason;
    },
    replies,
    stderr: () => stderr,
    async close() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill(), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const alive = (pid: number) => fs.existsSync(`/proc/${pid}`);

/**
 * Ends the `cline --cline-hub-daemon` a run in `workspace` left behind: found by its own command
 * line (`--cwd WORKSPACE`) and stopped by its process id, so no other Cline is touched. Resolves
 * once it has exited (it still writes under HOME while it shuts down); killed after 5 s.
 */
export async function stopClineHubDaemon(workspace: string): Promise<number[]> {
  const stopped: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const cwdAt = argv.indexOf('--cwd');
    if (!argv.includes('--cline-hub-daemon') || cwdAt < 0 || argv[cwdAt + 1] !== workspace) continue;
    try {
      process.kill(Number(name), 'SIGTERM');
      stopped.push(Number(name));
    } catch {
      // Gone already.
    }
  }
  const deadline = Date.now() + 5_000;
  while (stopped.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const pid of stopped.filter(alive)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  return stopped;
}
