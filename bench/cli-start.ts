import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

/**
 * How long the installed command takes to start, against plain `node -e 0` in the same rounds:
 * `rundiff --version` to its exit, `rundiff mcp` to its `initialize` answer (what an MCP client
 * waits for before anything else) and to its `tools/list` answer (everything loaded, the database
 * open). The server is compiled first and run as the package runs it: the compiled JavaScript with
 * no TypeScript loader (a copy of bin/, dist/, migrations/ and package.json beside the checkout's
 * node_modules). The three are interleaved in each round so that load on the machine hits all alike.
 */

export interface CliStartResult {
  rounds: number;
  /** Medians over the rounds (ms). */
  node: number;
  version: number;
  mcpInitialize: number;
  mcpTools: number;
  /** Medians of each round's time less that round's `node -e 0` (ms). */
  versionOverNode: number;
  mcpInitializeOverNode: number;
  mcpToolsOverNode: number;
  loadAverage: number;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function timeToExit(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(performance.now() - t) : reject(new Error(`${args.join(' ')} exit ${String(code)}`)),
    );
  });
}

/** Spawns `rundiff mcp`, sends initialize (and then tools/list) at once; times the two answers. */
function timeMcp(bin: string, workspace: string, env: NodeJS.ProcessEnv): Promise<{ init: number; tools: number }> {
  const t = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'mcp', '--workspace', workspace], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env,
    });
    child.on('error', reject);
    const frame = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
    frame({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    });
    frame({ jsonrpc: '2.0', method: 'notifications/initialized' });
    frame({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    let init = 0;
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let newline;
      while ((newline = buffered.indexOf('\n')) !== -1) {
        const message = JSON.parse(buffered.slice(0, newline)) as { id?: number; result?: { tools?: unknown[] } };
        buffered = buffered.slice(newline + 1);
        if (message.id === 1) init = performance.now() - t;
        if (message.id === 2) {
          if (!Array.isArray(message.result?.tools)) reject(new Error('tools/list failed'));
          const tools = performance.now() - t;
          child.kill();
          resolve({ init, tools });
        }
      }
    });
    child.on('exit', () => reject(new Error('rundiff mcp ended before answering tools/list')));
  });
}

export async function benchCliStart(options: { rounds?: number } = {}): Promise<CliStartResult> {
  const rounds = options.rounds ?? 15;
  const build = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-server.js')], { stdio: 'ignore' });
  if (build.status !== 0) throw new Error('scripts/build-server.js failed');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-cli-start-'));
  try {
    const pkg = path.join(tmp, 'pkg');
    for (const part of ['bin', 'dist/server', 'dist/shared', 'migrations'])
      fs.cpSync(path.join(ROOT, part), path.join(pkg, part), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(pkg, 'package.json'));
    fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(pkg, 'node_modules'));
    const bin = path.join(pkg, 'bin', 'rundiff.js');
    const workspace = path.join(tmp, 'workspace');
    fs.mkdirSync(workspace);
    const env = { PATH: process.env.PATH ?? '', HOME: tmp, RUNDIFF_DB: path.join(tmp, 'calls.db') };
    // One unmeasured round: the database is created and migrated, the file cache warm.
    await timeMcp(bin, workspace, env);
    const r = { node: [] as number[], version: [] as number[], init: [] as number[], tools: [] as number[] };
    for (let i = 0; i < rounds; i++) {
      r.node.push(await timeToExit(['-e', '0'], env));
      r.version.push(await timeToExit([bin, '--version'], env));
      const mcp = await timeMcp(bin, workspace, env);
      r.init.push(mcp.init);
      r.tools.push(mcp.tools);
    }
    const over = (xs: number[]) => median(xs.map((x, i) => x - r.node[i]!));
    return {
      rounds,
      node: median(r.node),
      version: median(r.version),
      mcpInitialize: median(r.init),
      mcpTools: median(r.tools),
      versionOverNode: over(r.version),
      mcpInitializeOverNode: over(r.init),
      mcpToolsOverNode: over(r.tools),
      loadAverage: os.loadavg()[0]!,
    };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

export function formatCliStartBench(r: CliStartResult): string {
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  return [
    `cli start (compiled package, median of ${r.rounds} interleaved rounds, load average ${r.loadAverage.toFixed(1)})`,
    `  node -e 0                    ${ms(r.node)}`,
    `  rundiff --version            ${ms(r.version)}  (+${ms(r.versionOverNode)} over node; budget 150 ms)`,
    `  rundiff mcp: initialize      ${ms(r.mcpInitialize)}  (+${ms(r.mcpInitializeOverNode)}; budget 500 ms)`,
    `  rundiff mcp: tools/list      ${ms(r.mcpTools)}  (+${ms(r.mcpToolsOverNode)}; everything loaded)`,
  ].join('\n');
}
