/**
 * Hook cost (`benchHooks`): the same two-prompt session of the real Claude Code CLI (offline,
 * against the scripted model: Write, Read and Edit for the first prompt, a shell edit for the
 * second) on a small git workspace, without hooks, with `rundiff hooks install claude-code`
 * pointing at a running rundiff server, and with only that install's HTTP hooks (its command hook,
 * which starts a server when none answers, removed) to tell the two costs apart. Rounds rotate
 * through the three so machine load hits all alike; the figure is the difference of the medians
 * divided by the hook events one session fires. Target: at most 100 ms per event.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { resolveConfig } from '../server/config.ts';
import { createServer } from '../server/main.ts';
import {
  CLAUDE_CODE_VERSION,
  ensureClaudeCode,
  installClaudeCodeHooks,
  runClaudeCode,
} from '../server/test-support/claude-code.ts';
import { startScriptedAnthropic, type ScriptedPrompt } from '../server/test-support/scripted-anthropic.ts';
import { createTempRepo } from '../server/test-support/temp-repo.ts';

export interface HooksBenchOptions {
  /** Timed sessions per side. Default 5. */
  rounds?: number;
  log?: (line: string) => void;
}

export interface HooksBenchResult {
  version: string;
  rounds: number;
  files: number;
  withoutMs: number;
  withMs: number;
  /** Hook events one session fires into rundiff (from the installed settings and the script). */
  events: number;
  perEventMs: number;
  /** The same with the HTTP hooks alone. */
  httpOnlyMs: number;
  httpEvents: number;
  perHttpEventMs: number;
}

type Mode = 'none' | 'http' | 'installed';
const MODES: Mode[] = ['none', 'http', 'installed'];

const FILES = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** How many times each hook event fires in one session of the script below. */
const FIRES: Record<string, number> = {
  UserPromptSubmit: 2,
  PreToolUse: 4,
  PostToolUse: 4,
  Stop: 2,
  SessionEnd: 2,
  SessionStart: 2,
};

function scriptFor(ws: string): ScriptedPrompt[] {
  return [
    {
      match: 'first prompt',
      turns: [
        { tool: 'Write', input: { file_path: path.join(ws, 'notes.txt'), content: 'one\ntwo\n' } },
        { tool: 'Read', input: { file_path: path.join(ws, 'file-1.txt') } },
        { tool: 'Edit', input: { file_path: path.join(ws, 'file-1.txt'), old_string: 'line', new_string: 'edited' } },
        { text: 'First reply.' },
      ],
    },
    {
      match: 'second prompt',
      turns: [
        { tool: 'Bash', input: { command: "sed -i 's/line/changed/' file-2.txt", description: 'Edit a file' } },
        { text: 'Second reply.' },
      ],
    },
  ];
}

interface HookGroup {
  hooks?: { type?: string }[];
}
type Settings = { hooks?: Record<string, HookGroup[]> };

const settingsFiles = (ws: string): string[] => {
  const dir = path.join(ws, '.claude');
  return (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
    .filter((n) => n.endsWith('.json'))
    .map((n) => path.join(dir, n));
};

/** The hook events configured in the workspace's Claude Code settings. */
function configuredEvents(ws: string): string[] {
  const events = new Set<string>();
  for (const file of settingsFiles(ws)) {
    const settings = JSON.parse(fs.readFileSync(file, 'utf8')) as Settings;
    for (const [e, groups] of Object.entries(settings.hooks ?? {}))
      if (groups.some((g) => g.hooks?.length)) events.add(e);
  }
  return [...events];
}

/** Removes every hook that is not `type: "http"` from the workspace's Claude Code settings. */
function keepHttpHooksOnly(ws: string): void {
  for (const file of settingsFiles(ws)) {
    const settings = JSON.parse(fs.readFileSync(file, 'utf8')) as Settings;
    for (const [e, groups] of Object.entries(settings.hooks ?? {})) {
      const kept = groups
        .map((g) => ({ ...g, hooks: (g.hooks ?? []).filter((h) => h.type === 'http') }))
        .filter((g) => g.hooks.length > 0);
      if (kept.length) settings.hooks![e] = kept;
      else delete settings.hooks![e];
    }
    fs.writeFileSync(file, JSON.stringify(settings, null, 2));
  }
}

export async function benchHooks(opts: HooksBenchOptions = {}): Promise<HooksBenchResult> {
  const rounds = opts.rounds ?? 7;
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const bin = await ensureClaudeCode();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-hooks-'));
  const config = resolveConfig(
    { port: 0, db: path.join(dataDir, 'rundiff.db'), host: '127.0.0.1' },
    {
      HOME: dataDir,
    },
  );
  const server = await createServer(config, { log: () => {} });
  const serverUrl = `http://127.0.0.1:${server.port}`;
  const times: Record<Mode, number[]> = { none: [], http: [], installed: [] };
  const events: Record<Mode, number> = { none: 0, http: 0, installed: 0 };
  try {
    for (let round = 0; round < rounds * MODES.length; round++) {
      const mode = MODES[round % MODES.length]!;
      const files = Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`file-${i}.txt`, `line ${i}\nline\n`]));
      const repo = createTempRepo({ files });
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-home-'));
      const model = await startScriptedAnthropic(scriptFor(repo.dir));
      try {
        if (mode !== 'none') {
          const install = await installClaudeCodeHooks(repo.dir, serverUrl, home);
          if (install.code !== 0) throw new Error(`hooks install failed: ${install.stderr}`);
          if (mode === 'http') keepHttpHooksOnly(repo.dir);
          events[mode] = configuredEvents(repo.dir).reduce((n, e) => n + (FIRES[e] ?? 0), 0);
        }
        const run = { bin, cwd: repo.dir, home, modelUrl: model.url };
        const t0 = performance.now();
        const first = await runClaudeCode('Please handle the first prompt.', run);
        const second = await runClaudeCode('Now the second prompt.', { ...run, args: ['--continue'] });
        const ms = performance.now() - t0;
        if (first.code !== 0 || second.code !== 0) throw new Error(`claude failed: ${first.stderr}${second.stderr}`);
        times[mode].push(ms);
        log(`hooks bench: round ${Math.floor(round / MODES.length) + 1} hooks: ${mode} ${ms.toFixed(0)} ms`);
      } finally {
        await model.close();
        repo.cleanup();
        fs.rmSync(home, { recursive: true, force: true });
      }
    }
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const withoutMs = median(times.none);
  const withMs = median(times.installed);
  const httpOnlyMs = median(times.http);
  const per = (ms: number, n: number) => (n > 0 ? (ms - withoutMs) / n : Number.NaN);
  return {
    version: CLAUDE_CODE_VERSION,
    rounds,
    files: FILES,
    withoutMs,
    withMs,
    events: events.installed,
    perEventMs: per(withMs, events.installed),
    httpOnlyMs,
    httpEvents: events.http,
    perHttpEventMs: per(httpOnlyMs, events.http),
  };
}

export function formatHooksBench(r: HooksBenchResult): string {
  return [
    `hooks: Claude Code ${r.version}, two prompts (Write, Read, Edit; a shell edit), ${r.files}-file git workspace, median of ${r.rounds}`,
    `  without hooks ${r.withoutMs.toFixed(0)} ms`,
    `  as installed ${r.withMs.toFixed(0)} ms, ${r.events} hook events: ${r.perEventMs.toFixed(1)} ms added per event (target <= 100 ms)`,
    `  its HTTP hooks alone ${r.httpOnlyMs.toFixed(0)} ms, ${r.httpEvents} hook events: ${r.perHttpEventMs.toFixed(1)} ms added per event`,
  ].join('\n');
}
