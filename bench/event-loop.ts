import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { DEFAULT_LIMITS } from '../server/config.ts';
import { createEngine } from '../server/checkpoint/index.ts';
import { resolveConfig } from '../server/config.ts';
import { createServer } from '../server/main.ts';
import { resolveWorkspace } from '../server/workspace/index.ts';
import { gitEnv } from './trees.ts';

/**
 * Event-loop responsiveness: the longest time the main thread was blocked during one completion
 * of a run that created 50,000 files (git workspace and plain folder), measured with
 * `monitorEventLoopDelay`. The server answers nothing else while its event loop is blocked.
 */

export interface EventLoopBenchResult {
  files: number;
  git: { completionMs: number; longestBlockMs: number; changed: number };
  plain: { completionMs: number; longestBlockMs: number; changed: number };
  /** The whole server: run.started, the files, run.completed over HTTP (store and events included). */
  server: { completionMs: number; longestBlockMs: number; changed: number };
}

const CREATED = 50_000;

function createFiles(root: string, n: number): void {
  for (let i = 0; i < n; i++) {
    const dir = path.join(root, 'new', `d${Math.floor(i / 500)}`);
    if (i % 500 === 0) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.txt`), `created ${i}\n`);
  }
}

async function measure(root: string): Promise<{ completionMs: number; longestBlockMs: number; changed: number }> {
  const limits = Object.freeze({ ...DEFAULT_LIMITS, maxScannedFiles: 2 * CREATED });
  const engine = createEngine({ limits, dbPath: null });
  try {
    const ws = await resolveWorkspace(root, { workspaceRoots: null, homeDir: '/nonexistent' });
    if (!ws.ok) throw new Error(`workspace refused: ${ws.reason}`);
    await engine.start({ sessionId: 'b', changeId: 'c', runId: 'r', workspace: ws });
    createFiles(root, CREATED);
    const h = monitorEventLoopDelay({ resolution: 5 });
    h.enable();
    const t0 = performance.now();
    const d = await engine.complete('b', 'c');
    const completionMs = performance.now() - t0;
    h.disable();
    return { completionMs, longestBlockMs: h.max / 1e6, changed: d?.changed_count ?? -1 };
  } finally {
    await engine.close();
  }
}

async function measureServer(
  root: string,
  dbDir: string,
): Promise<{ completionMs: number; longestBlockMs: number; changed: number }> {
  const config = resolveConfig(
    { port: '0', db: path.join(dbDir, 'loop.db'), limits: { maxScannedFiles: String(2 * CREATED) } },
    { HOME: os.homedir() },
  );
  const server = await createServer(config, { log: () => undefined });
  try {
    const post = async (event: object) => {
      const res = await fetch(`${server.url}/api/bridge/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(event),
      });
      if (!res.ok) throw new Error(`bridge answered ${res.status}: ${await res.text()}`);
      return res.json() as Promise<Record<string, unknown>>;
    };
    await post({ type: 'run.started', session_id: 'b', run_id: 'r', workspace: root });
    createFiles(root, CREATED);
    const h = monitorEventLoopDelay({ resolution: 5 });
    h.enable();
    const t0 = performance.now();
    await post({ type: 'run.completed', session_id: 'b', run_id: 'r' });
    const completionMs = performance.now() - t0;
    h.disable();
    // The changed count is the engine's (measured above); the server's answer is not parsed here.
    return { completionMs, longestBlockMs: h.max / 1e6, changed: -1 };
  } finally {
    await server.close();
  }
}

export async function benchEventLoop(): Promise<EventLoopBenchResult> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-loop-'));
  try {
    const repo = path.join(base, 'repo');
    fs.mkdirSync(repo);
    fs.writeFileSync(path.join(repo, 'README.md'), 'bench\n');
    const g = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: gitEnv(), stdio: 'ignore' });
    g('init', '-q');
    g('add', '.');
    g('commit', '-qm', 'init');
    const git = await measure(repo);
    const plain = path.join(base, 'plain');
    fs.mkdirSync(plain);
    fs.writeFileSync(path.join(plain, 'README.md'), 'bench\n');
    const plainResult = await measure(plain);
    const served = path.join(base, 'served');
    fs.mkdirSync(served);
    fs.writeFileSync(path.join(served, 'README.md'), 'bench\n');
    const server = await measureServer(served, base);
    return { files: CREATED, git, plain: plainResult, server };
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

export function formatEventLoopBench(r: EventLoopBenchResult): string {
  const row = (name: string, x: EventLoopBenchResult['git']) =>
    `  ${name.padEnd(6)} longest event-loop block ${x.longestBlockMs.toFixed(0).padStart(5)} ms   completion ${x.completionMs.toFixed(0).padStart(6)} ms   ${x.changed >= 0 ? `(${x.changed} changed)` : '(over HTTP)'}`;
  return [
    `event loop during a completion that adds ${r.files} files:`,
    row('git', r.git),
    row('plain', r.plain),
    row('server', r.server),
  ].join('\n');
}
