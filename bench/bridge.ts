/**
 * Server benchmarks (`benchBridge`), called by the bench runner:
 *  1. bridge overhead: run.started + run.completed over HTTP vs the engine alone, same workspace and
 *     change (50 modified / 10 added / 5 deleted / 3 renamed); target <= 1.2x;
 *  2. session-detail latency with 200 stored changes of 50 files each in one session, from a
 *     sequential client.
 * The session detail under load (p99 while runs complete) is `detail-load.ts`: it needs the server,
 * the load generator and the run-making client in separate processes.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createEngine } from '../server/checkpoint/index.ts';
import { resolveConfig } from '../server/config.ts';
import { createServer, type RunningServer } from '../server/main.ts';
import type { NewChange, NewFile } from '../server/store/index.ts';
import { resolveWorkspace } from '../server/workspace/index.ts';
import { modifiedChange, modifiedFile } from '../server/test-support/store-fixtures.ts';

export interface BridgeBenchOptions {
  /** Files in the synthetic repository. Default 5,000. */
  files?: number;
  /** Timed start+complete pairs per side. Default 11. */
  rounds?: number;
  log?: (line: string) => void;
}

export interface BridgeBenchResult {
  files: number;
  engineMs: number;
  httpMs: number;
  overheadRatio: number;
  detail: { changes: number; filesPerChange: number; bytes: number; medianMs: number; p95Ms: number };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: {
      PATH: process.env.PATH,
      HOME: os.tmpdir(),
      GIT_AUTHOR_NAME: 'b',
      GIT_AUTHOR_EMAIL: 'b@x',
      GIT_COMMITTER_NAME: 'b',
      GIT_COMMITTER_EMAIL: 'b@x',
    },
  });
}

const body = (i: number, v: number) =>
  Array.from({ length: 40 }, (_, l) => `file ${i} line ${l}${l === 7 ? ` v${v}` : ''}`).join('\n') + '\n';
const fileName = (i: number) => `src/d${i % 50}/f${i}.txt`;

/** A git repository of `n` committed text files in 50 folders. */
function makeRepo(n: number): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-')));
  for (let i = 0; i < n; i++) {
    const p = path.join(dir, fileName(i));
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, body(i, 0));
  }
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'init');
  return dir;
}

/** The engine benchmark's change, applied (forward) or undone (backward) with plain writes. */
function flip(dir: string, forward: boolean, round: number): void {
  for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(dir, fileName(i)), body(i, forward ? round + 1 : 0));
  for (let i = 0; i < 10; i++) {
    const p = path.join(dir, `added/new${i}.txt`);
    if (forward) {
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, body(100_000 + i, round));
    } else fs.rmSync(p, { force: true });
  }
  for (let i = 50; i < 55; i++) {
    const p = path.join(dir, fileName(i));
    if (forward) fs.rmSync(p);
    else fs.writeFileSync(p, body(i, 0));
  }
  for (let i = 55; i < 58; i++) {
    const from = path.join(dir, fileName(i));
    const to = path.join(dir, `moved/f${i}.txt`);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    if (forward) fs.renameSync(from, to);
    else fs.renameSync(to, from);
  }
}

async function post(server: RunningServer, event: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}/api/bridge/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
  });
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

function syntheticChange(sessionId: string, i: number, at: number): { change: NewChange; files: NewFile[] } {
  const files = Array.from({ length: 50 }, (_, f) =>
    modifiedFile(
      `src/module-${String(f).padStart(2, '0')}/file.ts`,
      `diff --git a/src/m${f}.ts b/src/m${f}.ts\n--- a/src/m${f}.ts\n+++ b/src/m${f}.ts\n@@ -1,3 +1,3 @@\n${' context\n'.repeat(2)}-old ${i}\n+new ${i}\n`.repeat(
        8,
      ),
      8,
    ),
  );
  return modifiedChange(sessionId, `seed-${i}`, at, files, { workspace: '/bench', started_at: at - 1000 });
}

export async function benchBridge(opts: BridgeBenchOptions = {}): Promise<BridgeBenchResult> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const nFiles = opts.files ?? 5_000;
  const rounds = opts.rounds ?? 11;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-db-'));
  const config = resolveConfig({ port: 0, db: path.join(tmp, 'bench.db') }, { HOME: os.homedir() });
  const repo = makeRepo(nFiles);
  const server = await createServer(config, { log: () => {} });
  const engine = createEngine({ limits: config.limits, dbPath: null });
  try {
    // 1. Bridge overhead, engine-alone and HTTP rounds interleaved so drift hits both alike.
    const resolved = await resolveWorkspace(repo, { workspaceRoots: null, homeDir: os.homedir() });
    if (!resolved.ok) throw new Error(resolved.message);
    const engineMs: number[] = [];
    const httpMs: number[] = [];
    for (let r = -1; r < rounds; r++) {
      let t = performance.now();
      await engine.start({ sessionId: 'e', changeId: `run:${r}`, runId: String(r), workspace: resolved });
      let spent = performance.now() - t;
      flip(repo, true, r + 10);
      t = performance.now();
      const d = await engine.complete('e', `run:${r}`);
      spent += performance.now() - t;
      if (d?.changed_count !== 68) throw new Error(`engine saw ${d?.changed_count} changes, expected 68`);
      flip(repo, false, 0);
      if (r >= 0) engineMs.push(spent);

      t = performance.now();
      await post(server, { type: 'run.started', session_id: 'overhead', run_id: `r${r}`, workspace: repo });
      spent = performance.now() - t;
      flip(repo, true, r + 10);
      t = performance.now();
      const done = await post(server, { type: 'run.completed', session_id: 'overhead', run_id: `r${r}` });
      spent += performance.now() - t;
      if (done.changed_count !== 68) throw new Error(`bridge saw ${String(done.changed_count)} changes, expected 68`);
      flip(repo, false, 0);
      if (r >= 0) httpMs.push(spent);
    }
    const engineMedian = median(engineMs);
    const httpMedian = median(httpMs);
    log(
      `bridge overhead: engine ${engineMedian.toFixed(0)} ms, HTTP ${httpMedian.toFixed(0)} ms, ratio ${(httpMedian / engineMedian).toFixed(2)}`,
    );

    // 2. Session detail with 200 changes x 50 files.
    const sessionId = 'big';
    await server.store.sessions.touch(sessionId, Date.now());
    const base = Date.now() - 200_000;
    await server.store.transaction(async (tx) => {
      for (let i = 0; i < 200; i++) {
        const { change, files } = syntheticChange(sessionId, i, base + i * 1000);
        await tx.changes.insert(change, files, config.limits.maxChangesPerSession);
      }
    });
    const detailUrl = `${server.url}/api/hermes/sessions/${sessionId}`;
    const lat: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 40; i++) {
      const t = performance.now();
      const res = await fetch(detailUrl);
      const text = await res.text();
      lat.push(performance.now() - t);
      bytes = Buffer.byteLength(text);
      if (i === 0 && (JSON.parse(text) as { changes: unknown[] }).changes.length !== 200)
        throw new Error('expected 200 changes');
    }
    const warm = lat.slice(5);
    log(
      `session detail (200 x 50): median ${median(warm).toFixed(1)} ms, p95 ${pct(warm, 0.95).toFixed(1)} ms, ${(bytes / 1024).toFixed(0)} KiB`,
    );

    return {
      files: nFiles,
      engineMs: engineMedian,
      httpMs: httpMedian,
      overheadRatio: httpMedian / engineMedian,
      detail: { changes: 200, filesPerChange: 50, bytes, medianMs: median(warm), p95Ms: pct(warm, 0.95) },
    };
  } finally {
    await engine.close();
    await server.close();
    fs.rmSync(repo, { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** The figures as markdown table rows, for docs/performance.md. */
export function bridgeReport(r: BridgeBenchResult): string {
  const ms = (n: number) => `${n.toFixed(n < 10 ? 1 : 0)} ms`;
  return [
    '| measure | result | target |',
    '| --- | --- | --- |',
    `| run.started + run.completed, engine alone (${r.files.toLocaleString('en')}-file git repo, 68-file change) | ${ms(r.engineMs)} | |`,
    `| the same over HTTP (bridge, store, socket events) | ${ms(r.httpMs)} (${r.overheadRatio.toFixed(2)}x) | <= 1.2x |`,
    `| session detail, ${r.detail.changes} changes x ${r.detail.filesPerChange} files (${Math.round(r.detail.bytes / 1024)} KiB JSON) | median ${ms(r.detail.medianMs)}, p95 ${ms(r.detail.p95Ms)} | |`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await benchBridge();
  process.stdout.write(`${bridgeReport(result)}\n`);
}
