/**
 * Hook cost (`benchHooks`): the same two-prompt session of the real Claude Code CLI (offline,
 * against the scripted model: Write, Read and Edit for the first prompt, a shell edit for the
 * second) on a small git workspace, with and without `rundiff hooks install claude-code` pointing
 * at a running rundiff server. Rounds alternate between the two so machine load hits both alike;
 * the figure is the difference of the medians divided by the hook events one session fires.
 * Target: at most 100 ms per event.
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
}

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

/** The hook events the installer configured in the workspace's Claude Code settings. */
function configuredEvents(ws: string): string[] {
  const events = new Set<string>();
  const dir = path.join(ws, '.claude');
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    if (!name.endsWith('.json')) continue;
    const settings = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as { hooks?: Record<string, unknown> };
    for (const e of Object.keys(settings.hooks ?? {})) events.add(e);
  }
  return [...events];
}

export async function benchHooks(opts: HooksBenchOptions = {}): Promise<HooksBenchResult> {
  const rounds = opts.rounds ?? 5;
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
  const without: number[] = [];
  const withHooks: number[] = [];
  let events = 0;
  try {
    for (let round = 0; round < rounds * 2; round++) {
      const hooked = round % 2 === 1;
      const files = Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`file-${i}.txt`, `line ${i}\nline\n`]));
      const repo = createTempRepo({ files });
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-home-'));
      const model = await startScriptedAnthropic(scriptFor(repo.dir));
      try {
        if (hooked) {
          const install = await installClaudeCodeHooks(repo.dir, serverUrl, home);
          if (install.code !== 0) throw new Error(`hooks install failed: ${install.stderr}`);
          events = configuredEvents(repo.dir).reduce((n, e) => n + (FIRES[e] ?? 0), 0);
        }
        const run = { bin, cwd: repo.dir, home, modelUrl: model.url };
        const t0 = performance.now();
        const first = await runClaudeCode('Please handle the first prompt.', run);
        const second = await runClaudeCode('Now the second prompt.', { ...run, args: ['--continue'] });
        const ms = performance.now() - t0;
        if (first.code !== 0 || second.code !== 0) throw new Error(`claude failed: ${first.stderr}${second.stderr}`);
        (hooked ? withHooks : without).push(ms);
        log(`hooks bench: round ${Math.floor(round / 2) + 1} ${hooked ? 'with' : 'without'} hooks ${ms.toFixed(0)} ms`);
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
  const withoutMs = median(without);
  const withMs = median(withHooks);
  return {
    version: CLAUDE_CODE_VERSION,
    rounds,
    files: FILES,
    withoutMs,
    withMs,
    events,
    perEventMs: events > 0 ? (withMs - withoutMs) / events : Number.NaN,
  };
}

export function formatHooksBench(r: HooksBenchResult): string {
  return [
    `hooks: Claude Code ${r.version}, two prompts (Write, Read, Edit; a shell edit), ${r.files}-file git workspace, median of ${r.rounds}`,
    `  without hooks ${r.withoutMs.toFixed(0)} ms, with rundiff hooks ${r.withMs.toFixed(0)} ms, ${r.events} hook events`,
    `  added per hook event: ${r.perEventMs.toFixed(1)} ms (target <= 100 ms)`,
  ].join('\n');
}
