/**
 * Session detail under load (`npm run bench -- detail`): the p99 of `GET /api/hermes/sessions/:id`
 * while a real tracked run completes every second, with the server, the load generator and the
 * run-making client in three processes so that none of them measures the others' work:
 *  - the server (`detail-server.ts`): the real `createServer` on an ephemeral port, reporting its own
 *    event-loop delay, busy share and CPU for the measured window;
 *  - the load generator (`detail-load-gen.ts`): a fixed request rate over keep-alive connections,
 *    latency from each request's scheduled time (coordinated omission counted), every answer checked;
 *  - this process: seeds the session's history (400 finished runs, 200 stored changes of 50 files,
 *    retention's cap, 400 messages) straight into the database before the server opens it, then posts
 *    run.started, edits 50 files of a copy of the 20,000-file benchmark repository and posts
 *    run.completed once a second, checking each run saw its 50 files.
 * Several windows are measured one after another; the report gives each and their medians.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { httpBridgeSender } from '../server/bridge-client/index.ts';
import { openStore, type NewChange, type NewFile } from '../server/store/index.ts';
import type { BridgeEvent } from '../shared/index.ts';
import type { LoadResult } from './detail-load-gen.ts';
import type { ParentMessage, ServerMessage, ServerStats } from './detail-server.ts';
import { median } from './stats.ts';
import { ensureTrees, git } from './trees.ts';
import { modifiedChange, modifiedFile } from '../server/test-support/store-fixtures.ts';

export interface DetailLoadOptions {
  /** Requests per second of the load generator. Default 20. */
  rate?: number;
  /** Keep-alive connections it may open. Default 10. */
  sockets?: number;
  /** Length of one measured window (s). Default 10. */
  durationS?: number;
  /** Measured windows. Default 5. */
  windows?: number;
  /** Whether a run completes every second during the load. Default true. */
  runs?: boolean;
  /** Write the server's main-thread CPU profile of the first window here. */
  profile?: string | null;
  log?: (line: string) => void;
}

export interface DetailWindow {
  rate: number;
  durationS: number;
  sent: number;
  errors: number;
  errorSamples: string[];
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  queued: number;
  server: ServerStats;
  /** Runs completed in the window, failed, and the longest time between two completions (ms). */
  runs: {
    completed: number;
    failed: number;
    perSecond: number;
    maxGapMs: number;
    completeP50Ms: number;
    completeMaxMs: number;
  };
  loadAverage: number;
}

export interface DetailLoadResult {
  gzipKiB: number;
  jsonKiB: number;
  windows: DetailWindow[];
}

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const TSX = path.join(BENCH, '..', 'bin', 'tsx.js');
const SESSION = 'long-session';
const SEEDED_RUNS = 400;
const STORED_CHANGES = 200;
const FILES_PER_RUN = 50;
const SLOTS = 10;

const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)]! : NaN;

/** A stored change as a completion makes it: 50 modified files of the repository with short patches. */
function seededChange(i: number, at: number, paths: string[]): { change: NewChange; files: NewFile[] } {
  const files = paths.map((p) =>
    modifiedFile(
      p,
      `diff --git a/${p} b/${p}\n--- a/${p}\n+++ b/${p}\n@@ -1,3 +1,4 @@\n const a = 1;\n const b = 2;\n-const c = ${i};\n+const c = ${i + 1};\n+// edit ${i}\n`,
      2,
      { deletions: 1, size_before: 8000, size_after: 8016 },
    ),
  );
  return modifiedChange(SESSION, `seed-${i}`, at, files, { workspace: '/seeded', started_at: at - 2000 });
}

/** The session's history: runs, messages and the stored changes retention keeps (the newest 200). */
export async function seed(dbFile: string, workspace: string, paths: string[]): Promise<void> {
  const store = openStore(dbFile);
  try {
    const base = Date.now() - SEEDED_RUNS * 60_000;
    await store.transaction(async (tx) => {
      await tx.sessions.touch(SESSION, base);
      for (let i = 0; i < SEEDED_RUNS; i++) {
        const at = base + i * 60_000;
        await tx.runs.insert('run', {
          run_id: `seed-${i}`,
          session_id: SESSION,
          title: null,
          status: 'completed',
          source: 'coding-agent',
          workspace,
          started_at: at - 2000,
          finished_at: at,
          error: null,
          change_id: `run:seed-${i}`,
          tracking: true,
          reason: null,
        });
        await tx.messages.insert({
          id: `m${i}`,
          session_id: SESSION,
          role: i % 2 ? 'assistant' : 'user',
          content: `message ${i}: ${'words '.repeat(40)}`,
          run_id: `seed-${i}`,
          tool_call_id: null,
          created_at: at - 3000,
        });
        if (i >= SEEDED_RUNS - STORED_CHANGES) {
          const slot = paths.slice((i % 400) * FILES_PER_RUN, (i % 400) * FILES_PER_RUN + FILES_PER_RUN);
          const { change, files } = seededChange(i, at, slot);
          await tx.changes.insert(change, files, STORED_CHANGES);
        }
      }
    });
  } finally {
    await store.close();
  }
}

function forkTs(file: string, args: string[]): ChildProcess {
  return fork(TSX, [path.join(BENCH, file), ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

function nextMessage<T>(child: ChildProcess, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${what}: process exited (${code})`));
    child.once('exit', onExit);
    child.once('message', (m) => {
      child.off('exit', onExit);
      const failed = m as { type?: string; message?: string };
      if (failed.type === 'failed') reject(new Error(`${what}: ${failed.message}`));
      else resolve(m as T);
    });
  });
}

/**
 * Starts a run, edits one slot of 50 files, completes it; once a second until stopped. The events
 * go through the project's own HTTP bridge client, as `rundiff run` sends them.
 */
function runMaker(url: string, workspace: string, slots: { abs: string; original: string }[][]) {
  const send = httpBridgeSender(url, null);
  const post = async (event: BridgeEvent) => (await send(event)) as Record<string, unknown>;
  let stop = false;
  let n = 0;
  const stats = { completed: 0, failed: 0, maxGapMs: 0, completeMs: [] as number[], failures: [] as string[] };
  let lastDone = performance.now();
  let since = performance.now();
  const loop = (async () => {
    let due = performance.now();
    while (!stop) {
      const id = `live-${n++}`;
      try {
        await post({ type: 'run.started', session_id: SESSION, run_id: id, workspace });
        for (const f of slots[n % SLOTS]!) fs.writeFileSync(f.abs, `${f.original}// edit ${id}\n`);
        const t = performance.now();
        const done = await post({ type: 'run.completed', session_id: SESSION, run_id: id });
        const now = performance.now();
        stats.completeMs.push(now - t);
        stats.maxGapMs = Math.max(stats.maxGapMs, now - lastDone);
        lastDone = now;
        if (done.changed_count === FILES_PER_RUN) stats.completed++;
        else throw new Error(`run saw ${String(done.changed_count)} changed files, expected ${FILES_PER_RUN}`);
      } catch (e) {
        stats.failed++;
        if (stats.failures.length < 3) stats.failures.push(e instanceof Error ? e.message : String(e));
      }
      // The next run starts a second after this one did, or at once when this one took longer.
      due = Math.max(due + 1000, performance.now());
      if (!stop) await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
    }
  })();
  return {
    take() {
      const now = performance.now();
      const out = { ...stats, elapsedS: (now - since) / 1000, completeMs: [...stats.completeMs].sort((a, b) => a - b) };
      since = now;
      Object.assign(stats, { completed: 0, failed: 0, maxGapMs: 0, completeMs: [], failures: [] });
      return out;
    },
    async stop() {
      stop = true;
      await loop;
    },
  };
}

export async function benchDetailLoad(opts: DetailLoadOptions = {}): Promise<DetailLoadResult> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const rate = opts.rate ?? 20;
  const sockets = opts.sockets ?? 10;
  const durationS = opts.durationS ?? 10;
  const windows = opts.windows ?? 5;
  const withRuns = opts.runs ?? true;
  const trees = ensureTrees(log);
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-detail-')));
  const workspace = path.join(tmp, 'ws');
  const dbFile = path.join(tmp, 'bench.db');
  let server: ChildProcess | null = null;
  try {
    // A private copy: the cached tree is shared with the other benchmarks and must stay clean.
    fs.cpSync(trees.gitTree, workspace, { recursive: true, preserveTimestamps: true });
    // The copy has new inodes and change times: refresh the index's stat data once, as any git
    // command in a freshly cloned repository would, or every run would rehash all 20,000 files.
    git(workspace, 'update-index', '-q', '--refresh');
    await seed(dbFile, workspace, trees.gitFiles);
    const slots = Array.from({ length: SLOTS }, (_, s) =>
      trees.gitFiles.slice(s * 997, s * 997 + FILES_PER_RUN).map((rel) => {
        const abs = path.join(workspace, rel);
        return { abs, original: fs.readFileSync(abs, 'utf8') };
      }),
    );

    server = forkTs('detail-server.ts', [dbFile]);
    const ready = await nextMessage<ServerMessage & { type: 'ready' }>(server, 'server');
    const detailUrl = `${ready.url}/api/hermes/sessions/${SESSION}`;
    // The first answer reads every stored change; that cold read is not what the windows measure.
    const first = await fetch(detailUrl, { headers: { 'accept-encoding': 'gzip' } });
    if (!first.ok) throw new Error(`session detail: ${first.status}`);
    await first.arrayBuffer();
    const runs = withRuns ? runMaker(ready.url, workspace, slots) : null;
    // Two runs before measuring: the git helper started, the checkpoint caches warm, the slots dirty.
    if (runs) await new Promise((r) => setTimeout(r, 2500));
    runs?.take();

    const result: DetailLoadResult = { gzipKiB: 0, jsonKiB: 0, windows: [] };
    for (let w = 0; w < windows; w++) {
      const profile = w === 0 ? (opts.profile ?? null) : null;
      server.send({ type: 'start', profile } satisfies ParentMessage);
      const gen = forkTs('detail-load-gen.ts', [detailUrl, String(rate), String(durationS), String(sockets)]);
      const load = await nextMessage<LoadResult>(gen, 'load generator');
      server.send({ type: 'stop' } satisfies ParentMessage);
      const { stats } = await nextMessage<ServerMessage & { type: 'measured' }>(server, 'server');
      const r = runs?.take();
      const lat = load.latenciesMs;
      const win: DetailWindow = {
        rate,
        durationS,
        sent: load.sent,
        errors: load.errors + (load.sent - load.ok - load.errors),
        errorSamples: load.errorSamples,
        p50Ms: pct(lat, 0.5),
        p99Ms: pct(lat, 0.99),
        maxMs: lat[lat.length - 1] ?? NaN,
        queued: load.queued,
        server: stats,
        runs: {
          completed: r?.completed ?? 0,
          failed: r?.failed ?? 0,
          maxGapMs: r?.maxGapMs ?? NaN,
          perSecond: r ? r.completed / r.elapsedS : 0,
          completeP50Ms: r ? pct(r.completeMs, 0.5) : NaN,
          completeMaxMs: r?.completeMs[r.completeMs.length - 1] ?? NaN,
        },
        loadAverage: os.loadavg()[0]!,
      };
      result.gzipKiB = load.gzipKiB;
      result.jsonKiB = load.jsonKiB;
      result.windows.push(win);
      log(formatWindow(w + 1, win));
      if (r?.failures.length) log(`  run failures: ${r.failures.join('; ')}`);
      if (win.errorSamples.length) log(`  request errors: ${win.errorSamples.join('; ')}`);
      if (stats.profileTop) log(stats.profileTop);
    }
    await runs?.stop();
    return result;
  } finally {
    if (server?.connected) {
      const exited = new Promise((r) => server!.once('exit', r));
      server.send({ type: 'exit' } satisfies ParentMessage);
      await exited;
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

const f1 = (n: number) => n.toFixed(n < 10 ? 1 : 0);

function formatWindow(i: number, w: DetailWindow): string {
  return (
    `window ${i}: ${w.sent} requests at ${w.rate}/s, p50 ${f1(w.p50Ms)} ms, p99 ${f1(w.p99Ms)} ms, max ${f1(w.maxMs)} ms, ` +
    `errors ${w.errors}, queued ${w.queued}; in the server p50 ${f1(w.server.handledP50Ms)} p99 ${f1(w.server.handledP99Ms)} ms (max ${f1(w.server.handledMaxMs)}), handler p50 ${f1(w.server.handlerP50Ms)} p99 ${f1(w.server.handlerP99Ms)} max ${f1(w.server.handlerMaxMs)}, loop delay p99 ${f1(w.server.loopDelayP99Ms)} ms ` +
    `(max ${f1(w.server.loopDelayMaxMs)}), busy ${(w.server.busy * 100).toFixed(0)}%, CPU ${f1(w.server.cpuMs / 1000)} s, ` +
    `RSS ${w.server.rssMiB.toFixed(0)} MiB; runs ${w.runs.completed} done (${w.runs.perSecond.toFixed(2)}/s) / ${w.runs.failed} failed, longest gap ${f1(w.runs.maxGapMs)} ms, ` +
    `completion p50 ${f1(w.runs.completeP50Ms)} ms max ${f1(w.runs.completeMaxMs)} ms; load average ${w.loadAverage.toFixed(1)}`
  );
}

/** Medians over the windows, as a markdown table for docs/performance.md. */
export function formatDetailLoad(r: DetailLoadResult): string {
  const m = (f: (w: DetailWindow) => number) => f1(median(r.windows.map(f)));
  const sum = (f: (w: DetailWindow) => number) => r.windows.reduce((n, w) => n + f(w), 0);
  const w0 = r.windows[0]!;
  return [
    `| session detail under load: ${r.windows.length} windows x ${w0.sent} requests at ${w0.rate}/s (medians) | result |`,
    '| --- | --- |',
    `| answer size (gzip / JSON) | ${r.gzipKiB.toFixed(0)} / ${r.jsonKiB.toFixed(0)} KiB |`,
    `| p50 / p99 / max | ${m((w) => w.p50Ms)} / ${m((w) => w.p99Ms)} / ${m((w) => w.maxMs)} ms |`,
    `| errors (all windows) | ${sum((w) => w.errors)} |`,
    `| in the server: request to last byte written, p50 / p99 / max | ${m((w) => w.server.handledP50Ms)} / ${m((w) => w.server.handledP99Ms)} / ${m((w) => w.server.handledMaxMs)} ms |`,
    `| in the server: the synchronous handler, p50 / p99 / max | ${m((w) => w.server.handlerP50Ms)} / ${m((w) => w.server.handlerP99Ms)} / ${m((w) => w.server.handlerMaxMs)} ms |`,
    `| server event-loop delay p99 / max | ${m((w) => w.server.loopDelayP99Ms)} / ${m((w) => w.server.loopDelayMaxMs)} ms |`,
    `| server main thread busy | ${m((w) => w.server.busy * 100)}% |`,
    `| runs completed (per second) / failed | ${sum((w) => w.runs.completed)} (${median(r.windows.map((w) => w.runs.perSecond)).toFixed(2)}/s) / ${sum((w) => w.runs.failed)} |`,
    `| longest time between two completions (median of windows / worst) | ${m((w) => w.runs.maxGapMs)} / ${f1(Math.max(...r.windows.map((w) => w.runs.maxGapMs)))} ms |`,
    `| run.completed answer p50 / max | ${m((w) => w.runs.completeP50Ms)} / ${m((w) => w.runs.completeMaxMs)} ms |`,
    `| load average | ${m((w) => w.loadAverage)} |`,
  ].join('\n');
}

/** The options from command-line arguments `--rate=N --windows=N --duration=S --runs=off --profile=FILE`. */
export function detailLoadArgs(argv: string[]): DetailLoadOptions {
  const arg = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const num = (name: string) => {
    const v = arg(name);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!(n > 0)) throw new Error(`--${name} must be a positive number, not ${JSON.stringify(v)}`);
    return n;
  };
  return {
    rate: num('rate'),
    windows: num('windows'),
    durationS: num('duration'),
    runs: arg('runs') !== 'off',
    profile: arg('profile') ?? null,
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const result = await benchDetailLoad(detailLoadArgs(process.argv.slice(2)));
  process.stdout.write(`${formatDetailLoad(result)}\n`);
}
