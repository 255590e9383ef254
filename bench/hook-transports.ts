/**
 * Hook cost per agent (`benchHookTransports`, part of `npm run bench -- hooks`): what one hook event
 * costs through each agent's own transport as `rundiff hooks install` sets it up, against a running
 * rundiff server on a small git workspace. Each agent's recorded fixture session (its real payloads,
 * `server/hooks/fixtures/<agent>/`) is sent the way the agent sends it:
 *
 * - Claude Code: its `type: "http"` hooks POST the payload (SessionStart runs the hook client);
 * - Codex, Gemini CLI: the command hook, run by a shell with the payload on stdin;
 * - Cline: the hook executable named after the event, payload on stdin;
 * - opencode: rundiff's plugin loaded in this process as opencode loads it, its hooks called.
 *
 * The baseline, measured in the same rounds: the same payloads POSTed straight to
 * `/api/hooks/<agent>` (the server's own work for them: checkpoints, deltas, storage). Rounds
 * rotate through the agents and the baseline so machine load hits all alike; each round gets a
 * fresh server, workspace and home. Figures: median ms per event, and the ratio to the baseline.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { hooksCommand } from '../server/cli/hooks.ts';
import { resolveConfig } from '../server/config.ts';
import { loadFixture, payloadsOf, isWriteStep, type FixtureItem } from '../server/hooks/fixtures/replay.ts';
import { createServer } from '../server/main.ts';
import { createTempRepo } from '../server/test-support/temp-repo.ts';

export const TRANSPORT_AGENTS = ['claude-code', 'codex', 'gemini', 'cline', 'opencode'] as const;
export type TransportAgent = (typeof TRANSPORT_AGENTS)[number];

const FIXTURES: Record<TransportAgent, string> = {
  'claude-code': 'two-prompts',
  codex: 'one-prompt',
  gemini: 'sequence',
  cline: 'sequence',
  opencode: 'sequence',
};

const TRANSPORT: Record<TransportAgent, string> = {
  'claude-code': 'http hooks',
  codex: 'command hook',
  gemini: 'command hook',
  cline: 'hook executable',
  opencode: 'plugin (in process)',
};

/** Cline's hook file for each of its payloads' `hookName`. */
const CLINE_FILES: Record<string, string> = {
  agent_start: 'TaskStart',
  agent_resume: 'TaskResume',
  prompt_submit: 'UserPromptSubmit',
  tool_call: 'PreToolUse',
  tool_result: 'PostToolUse',
  agent_end: 'TaskComplete',
  agent_abort: 'TaskCancel',
};

export interface TransportFigure {
  agent: TransportAgent;
  transport: string;
  events: number;
  /** Median ms per event through the agent's transport. */
  perEventMs: number;
  /** Median ms per event for the same payloads POSTed straight to the server. */
  directPerEventMs: number;
}

export interface HookTransportsResult {
  rounds: number;
  files: number;
  /** Median ms to start and end a bare Node process (what a command hook pays before its work). */
  nodeStartMs: number;
  agents: TransportFigure[];
}

const FILES = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Runs `file args` with `stdin` and waits for it to end (its output is read and dropped). */
function run(file: string, args: string[], stdin: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${file} exited ${code}`))));
    child.stdin.end(stdin);
  });
}

type Json = Record<string, unknown>;
type Handler = { type?: string; url?: string; command?: string };
type Send = (payload: Json) => Promise<void>;

/** The handlers installed for each event of a settings file in Claude Code's hooks shape. */
function installedHandlers(file: string): Map<string, Handler[]> {
  const settings = JSON.parse(fs.readFileSync(file, 'utf8')) as { hooks?: Record<string, { hooks?: Handler[] }[]> };
  const out = new Map<string, Handler[]>();
  for (const [event, groups] of Object.entries(settings.hooks ?? {}))
    out.set(
      event,
      groups.flatMap((g) => g.hooks ?? []),
    );
  return out;
}

const post = async (url: string, payload: Json) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`POST ${url}: ${res.status}`);
};

/** Sends payloads through the handlers a settings file names for their event (http or command). */
function settingsTransport(file: string, eventField: string, env: NodeJS.ProcessEnv): Send {
  const handlers = installedHandlers(file);
  return async (payload) => {
    for (const h of handlers.get(String(payload[eventField])) ?? []) {
      if (h.type === 'http' && h.url) await post(h.url, payload);
      else if (h.type === 'command' && h.command) await run('/bin/sh', ['-c', h.command], JSON.stringify(payload), env);
    }
  };
}

/** How the agent sends a payload to rundiff, as installed in `ws` and `home`. */
async function transportOf(agent: TransportAgent, ws: string, home: string): Promise<Send> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home };
  switch (agent) {
    case 'claude-code':
      return settingsTransport(path.join(ws, '.claude', 'settings.json'), 'hook_event_name', env);
    case 'codex':
      return settingsTransport(path.join(home, '.codex', 'hooks.json'), 'hook_event_name', env);
    case 'gemini':
      return settingsTransport(path.join(ws, '.gemini', 'settings.json'), 'hook_event_name', env);
    case 'cline':
      return async (payload) => {
        const name = CLINE_FILES[String(payload.hookName)];
        if (name) await run(path.join(home, '.cline', 'hooks', name), [], JSON.stringify(payload), env);
      };
    case 'opencode': {
      const file = path.join(ws, '.opencode', 'plugins', 'rundiff.js');
      type Hook = (a: unknown, b?: unknown) => Promise<void>;
      const mod = (await import(`${pathToFileURL(file).href}?${Date.now()}`)) as Record<
        string,
        (i: { directory: string }) => Promise<Record<string, Hook>>
      >;
      const plugin = Object.values(mod).find((v) => typeof v === 'function')!;
      const hooks = await plugin({ directory: ws });
      return async (payload) => {
        const hook = hooks[String(payload.hook)];
        if (!hook) return;
        if (payload.hook === 'event') await hook({ event: payload.event });
        else await hook(payload.input, payload.output ?? {});
      };
    }
  }
}

/** The agent's fixture session for `ws`, its session id made unique to the round. */
function sessionFor(agent: TransportAgent, ws: string, round: string): FixtureItem[] {
  const items = loadFixture(agent, FIXTURES[agent], ws);
  // Fixtures recorded in a workspace of their own name it literally.
  let text = JSON.stringify(items).replaceAll('/home/dev/project', ws);
  const first = payloadsOf(items)[0]!;
  const ids = [first.session_id, first.taskId, (first.input as Json | undefined)?.sessionID, sessionOfEvent(first)];
  for (const id of ids) if (typeof id === 'string' && id !== '') text = text.replaceAll(id, `${id}-${round}`);
  return JSON.parse(text) as FixtureItem[];
}

function sessionOfEvent(p: Json): unknown {
  const info = ((p.event as Json | undefined)?.properties as Json | undefined)?.info as Json | undefined;
  return info?.id;
}

export interface HookTransportsOptions {
  rounds?: number;
  log?: (line: string) => void;
}

export async function benchHookTransports(opts: HookTransportsOptions = {}): Promise<HookTransportsResult> {
  const rounds = opts.rounds ?? 5;
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const times = new Map<string, number[]>();
  const events = new Map<TransportAgent, number>();
  const nodeStarts: number[] = [];
  const add = (key: string, ms: number) => times.set(key, [...(times.get(key) ?? []), ms]);
  for (let round = 0; round < rounds; round++) {
    const t0 = performance.now();
    await run(process.execPath, ['-e', ''], '', process.env);
    nodeStarts.push(performance.now() - t0);
    for (const agent of TRANSPORT_AGENTS) {
      // The baseline and the transport alternate which goes first.
      const modes = round % 2 === 0 ? (['direct', 'agent'] as const) : (['agent', 'direct'] as const);
      for (const mode of modes) {
        const ms = await oneSession(agent, mode, `r${round}${mode}`, events);
        add(`${agent}:${mode}`, ms);
        log(`hooks bench: round ${round + 1} ${agent} ${mode} ${ms.toFixed(0)} ms`);
      }
    }
  }
  return {
    rounds,
    files: FILES,
    nodeStartMs: median(nodeStarts),
    agents: TRANSPORT_AGENTS.map((agent) => {
      const n = events.get(agent)!;
      return {
        agent,
        transport: TRANSPORT[agent],
        events: n,
        perEventMs: median(times.get(`${agent}:agent`)!) / n,
        directPerEventMs: median(times.get(`${agent}:direct`)!) / n,
      };
    }),
  };
}

/** One fixture session of `agent` into a fresh server: the total ms of its payloads' deliveries. */
async function oneSession(
  agent: TransportAgent,
  mode: 'direct' | 'agent',
  round: string,
  events: Map<TransportAgent, number>,
): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-transport-'));
  const home = path.join(dataDir, 'home');
  fs.mkdirSync(home);
  const files = Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`file-${i}.txt`, `line ${i}\nline\n`]));
  const repo = createTempRepo({ files });
  const config = resolveConfig({ port: 0, db: path.join(dataDir, 'rundiff.db'), host: '127.0.0.1' }, { HOME: home });
  const server = await createServer(config, { log: () => {} });
  const url = `http://127.0.0.1:${server.port}`;
  try {
    const out: string[] = [];
    const code = await hooksCommand(['install', agent, '--workspace', repo.dir, '--server', url], {
      env: { HOME: home },
      cwd: repo.dir,
      out: (l) => out.push(l),
    });
    if (code !== 0) throw new Error(`hooks install ${agent} failed: ${out.join('\n')}`);
    const send: Send =
      mode === 'direct' ? (p) => post(`${url}/api/hooks/${agent}`, p) : await transportOf(agent, repo.dir, home);
    const items = sessionFor(agent, repo.dir, round);
    events.set(agent, payloadsOf(items).length);
    let ms = 0;
    for (const item of items) {
      if (isWriteStep(item)) {
        fs.writeFileSync(path.join(repo.dir, item.path), item.content);
        continue;
      }
      const t0 = performance.now();
      await send(item);
      ms += performance.now() - t0;
    }
    const sessions = (await (await fetch(`${url}/api/hermes/sessions`)).json()) as { sessions: unknown[] };
    if (sessions.sessions.length !== 1)
      throw new Error(`${agent} ${mode}: ${sessions.sessions.length} sessions recorded, not 1`);
    return ms;
  } finally {
    await server.close();
    repo.cleanup();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export function formatHookTransports(r: HookTransportsResult): string {
  const rows = r.agents.map(
    (a) =>
      `  ${a.agent.padEnd(12)} ${a.transport.padEnd(20)} ${String(a.events).padStart(3)} events  ${a.perEventMs.toFixed(1).padStart(6)} ms/event, ${(a.perEventMs - a.directPerEventMs).toFixed(1).padStart(6)} ms added by the transport (server's own work ${a.directPerEventMs.toFixed(1)} ms/event; x${(a.perEventMs / a.directPerEventMs).toFixed(2)})`,
  );
  return [
    `hooks per agent: each agent's recorded session through its installed transport, ${r.files}-file git workspace, median of ${r.rounds}; a bare Node process start ${r.nodeStartMs.toFixed(0)} ms`,
    ...rows,
  ].join('\n');
}
