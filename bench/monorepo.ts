import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { DEFAULT_LIMITS } from '../server/config.ts';
import { createEngine, type DeltaResult } from '../server/checkpoint/index.ts';
import { parseIndexFile } from '../server/checkpoint/git-status/index-snapshot.ts';
import { resolveWorkspace } from '../server/workspace/index.ts';
import { httpRun, startBenchServer } from './http-run.ts';
import { BENCH_ROOT, git, gitEnv, layout, writeTree } from './trees.ts';
import { median } from './stats.ts';

/**
 * Monorepo benchmark on DEFAULT settings: a git repository of N tracked files (100,000 by default;
 * `npm run bench -- monorepo500k` for 500,000) of 1-4 KiB plus an ignored node_modules of 10,000
 * files. Per round: `git status` (the baseline), then a checkpoint alone, a 50 modified / 10 added
 * / 5 deleted / 3 renamed change, its completion (asserted complete and exact), the change
 * reverted. Medians, and the resident memory per live clean checkpoint and of the process.
 */

export interface MonorepoBenchResult {
  files: number;
  rounds: number;
  statusMs: number;
  checkpointMs: number;
  completionMs: number;
  checkpointRatio: number;
  ratio: number;
  /** The same run through the server over HTTP (`run.started` / `run.completed` answers). */
  http: { checkpointMs: number; completionMs: number; ratio: number; checkpointRatio: number; counts: string };
  /** What the parsed index holds (the part of a clean checkpoint that grows with the repository). */
  indexBytes: number;
  firstCheckpointBytes: number;
  /** Heap and buffers still held after the first clean checkpoint on a fresh engine (after GC). */
  firstCheckpointHeldBytes: number;
  nextCheckpointBytes: number;
  peakRssBytes: number;
  /** The server process at its largest (VmHWM) over the HTTP rounds. */
  serverPeakRssBytes: number;
  outcome: string;
}

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

export function ensureMonorepo(count: number, log: (s: string) => void): { dir: string; files: string[] } {
  const dir = path.join(BENCH_ROOT, `monorepo-${count}`);
  const files = layout(count);
  const ready = path.join(BENCH_ROOT, `monorepo-${count}.ready`);
  if (!fs.existsSync(ready)) {
    log(`generating a ${count}-file repository in ${dir} (once; takes a while)...`);
    fs.rmSync(dir, { recursive: true, force: true });
    writeTree(dir, files, 1024, 4096, 7);
    writeTree(
      dir,
      Array.from({ length: 10_000 }, (_, i) => `node_modules/pkg${Math.floor(i / 20)}/lib/i${i}.js`),
      100,
      400,
      8,
    );
    fs.writeFileSync(path.join(dir, '.gitignore'), 'node_modules/\n');
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'monorepo');
    fs.writeFileSync(ready, 'ok\n');
  }
  return { dir: fs.realpathSync(dir), files };
}

function gitStatusMs(cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    execFile(
      'git',
      ['status', '--porcelain=v2', '-z', '--untracked-files=all'],
      { cwd, env: gitEnv(), maxBuffer: 1 << 28 },
      (err) => (err ? reject(new Error(err.message, { cause: err })) : resolve(performance.now() - t0)),
    );
  });
}

/** 50 modified, 10 added, 5 deleted, 3 renamed; returns the undo. */
function applyChange(root: string, files: string[], round: number): () => void {
  const step = Math.floor(files.length / 80);
  const pick = (k: number) => files[(k * step + round * 7) % files.length]!;
  const originals = new Map<string, Buffer>();
  const abs = (rel: string) => path.join(root, rel);
  for (let k = 0; k < 50; k++) {
    const rel = pick(k);
    originals.set(rel, fs.readFileSync(abs(rel)));
    fs.appendFileSync(abs(rel), `// edit ${round}\n`);
  }
  const added = Array.from({ length: 10 }, (_, k) => `added/r${round}/n${k}.ts`);
  for (const rel of added) {
    fs.mkdirSync(path.dirname(abs(rel)), { recursive: true });
    fs.writeFileSync(abs(rel), `export const added${k(rel)} = ${round};\n`);
  }
  const deleted = Array.from({ length: 5 }, (_, k) => pick(50 + k));
  for (const rel of deleted) {
    originals.set(rel, fs.readFileSync(abs(rel)));
    fs.rmSync(abs(rel));
  }
  const renamed = Array.from({ length: 3 }, (_, k) => pick(60 + k));
  for (const rel of renamed) fs.renameSync(abs(rel), abs(rel) + '.moved');
  return () => {
    for (const rel of renamed) fs.renameSync(abs(rel) + '.moved', abs(rel));
    for (const [rel, bytes] of originals) {
      fs.writeFileSync(abs(rel), bytes);
      const old = new Date(Date.now() - 24 * 3600_000);
      fs.utimesSync(abs(rel), old, old);
    }
    fs.rmSync(path.join(root, 'added'), { recursive: true, force: true });
  };
}

function k(rel: string): string {
  return rel.replace(/[^a-z0-9]/gi, '_');
}

function exact(d: DeltaResult | null): string {
  if (!d) return 'no checkpoint';
  const got = `${d.modified_count}/${d.added_count}/${d.deleted_count}/${d.renamed_count}`;
  if (d.truncated) return `incomplete (${d.truncated_reasons.join(', ')}), ${got}`;
  return got === '50/10/5/3' ? 'complete and exact' : `wrong counts ${got}`;
}

export async function benchMonorepo(
  opts: { files?: number; rounds?: number; log?: (s: string) => void } = {},
): Promise<MonorepoBenchResult> {
  const log = opts.log ?? ((s: string) => void process.stderr.write(`${s}\n`));
  const count = opts.files ?? 100_000;
  const rounds = Math.max(3, opts.rounds ?? 5);
  const tree = ensureMonorepo(count, log);
  git(tree.dir, 'update-index', '-q', '--refresh');
  // Default settings: nothing raised.
  const engine = createEngine({ limits: DEFAULT_LIMITS, dbPath: null });
  const ws = await resolveWorkspace(tree.dir, { workspaceRoots: null, homeDir: '/nonexistent-home' });
  if (!ws.ok) throw new Error(ws.message);
  let peak = process.memoryUsage().rss;
  const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const st: number[] = [];
  const cps: number[] = [];
  const dones: number[] = [];
  const outcomes = new Set<string>();
  const hcps: number[] = [];
  const hdones: number[] = [];
  const httpCounts = new Set<string>();
  const http = await startBenchServer();
  try {
    for (let r = -1; r < rounds; r++) {
      const status = await gitStatusMs(tree.dir);
      const id = `m${r}`;
      const t0 = performance.now();
      await engine.start({ sessionId: 'bench', changeId: id, runId: id, workspace: ws });
      const t1 = performance.now();
      const undo = applyChange(tree.dir, tree.files, r + 1);
      const t2 = performance.now();
      const delta = await engine.complete('bench', id);
      const t3 = performance.now();
      undo();
      git(tree.dir, 'update-index', '-q', '--refresh');
      const hr = await httpRun(http, tree.dir, `h${r}`, () => applyChange(tree.dir, tree.files, r + 1));
      git(tree.dir, 'update-index', '-q', '--refresh');
      if (r < 0) continue;
      hcps.push(hr.checkpointMs);
      hdones.push(hr.completionMs);
      httpCounts.add(hr.counts);
      outcomes.add(exact(delta));
      st.push(status);
      cps.push(t1 - t0);
      dones.push(t3 - t2);
      log(
        `round ${r + 1}: git status ${status.toFixed(0)} ms | checkpoint ${(t1 - t0).toFixed(0)} ms | completion ${(t3 - t2).toFixed(0)} ms | ${exact(delta)} | HTTP ${hr.checkpointMs.toFixed(0)} + ${hr.completionMs.toFixed(0)} ms`,
      );
    }
    // Memory, on a fresh engine: the first live checkpoint holds the parsed index; the next ones share it.
    const serverPeakRssBytes = http.peakRssBytes();
    await http.close();
    await engine.close();
    const fresh = createEngine({ limits: DEFAULT_LIMITS, dbPath: null });
    // Twice, with a turn between: what the closed engine and the rounds left is gone before the baseline.
    const settle = async () => {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 50));
      gc();
    };
    await settle();
    const held = () => {
      const m = process.memoryUsage();
      return m.heapUsed + m.external;
    };
    const rss0 = process.memoryUsage().rss;
    const held0 = held();
    await fresh.start({ sessionId: 'mem', changeId: 'first', runId: 'first', workspace: ws });
    await settle();
    const rss1 = process.memoryUsage().rss;
    const held1 = held();
    const more = 5;
    for (let i = 0; i < more; i++)
      await fresh.start({ sessionId: 'mem', changeId: `n${i}`, runId: `n${i}`, workspace: ws });
    gc();
    const rss2 = process.memoryUsage().rss;
    await fresh.close();
    const status = median(st);
    const indexBytes = parseIndexFile(fs.readFileSync(path.join(tree.dir, '.git', 'index')), '').bytes;
    return {
      indexBytes,
      files: count,
      rounds,
      statusMs: status,
      checkpointMs: median(cps),
      completionMs: median(dones),
      checkpointRatio: median(cps) / status,
      ratio: (median(cps) + median(dones)) / status,
      http: {
        checkpointMs: median(hcps),
        completionMs: median(hdones),
        ratio: (median(hcps) + median(hdones)) / status,
        checkpointRatio: median(hcps) / status,
        counts: [...httpCounts].join('; '),
      },
      firstCheckpointBytes: Math.max(0, rss1 - rss0),
      firstCheckpointHeldBytes: Math.max(0, held1 - held0),
      nextCheckpointBytes: Math.max(0, (rss2 - rss1) / more),
      peakRssBytes: peak,
      serverPeakRssBytes,
      outcome: [...outcomes].join('; '),
    };
  } finally {
    clearInterval(sample);
    await http.close();
    await engine.close();
  }
}

export function formatMonorepoBench(r: MonorepoBenchResult): string {
  const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  return [
    `Monorepo, default settings (${r.files.toLocaleString('en-US')} tracked files + ignored node_modules of 10,000; medians of ${r.rounds} rounds)`,
    `  git status --porcelain=v2 -z --untracked-files=all  ${ms(r.statusMs)}`,
    `  checkpoint ${ms(r.checkpointMs)} = ${r.checkpointRatio.toFixed(2)}x git status   target <= 1.5x`,
    `  checkpoint + completion ${ms(r.checkpointMs + r.completionMs)} = ${r.ratio.toFixed(2)}x git status   target <= 3x`,
    `  over HTTP: run.started ${ms(r.http.checkpointMs)} = ${r.http.checkpointRatio.toFixed(2)}x, run.completed ${ms(r.http.completionMs)}; together ${r.http.ratio.toFixed(2)}x git status   target <= 3.6x (${r.http.counts})`,
    `  result: ${r.outcome}`,
    `  memory per clean checkpoint: the parsed index it holds ${mib(r.indexBytes)} (shared while the index file is the same)`,
    `  held after GC by the first live clean checkpoint (heap + buffers) ${mib(r.firstCheckpointHeldBytes)}   target < 16 MiB`,
    `  resident memory added: first live clean checkpoint ${mib(r.firstCheckpointBytes)} (with what the allocator keeps of reading the index), each further one ${mib(r.nextCheckpointBytes)}`,
    `  server process peak RSS ${mib(r.serverPeakRssBytes)}   target < 300 MiB (bench process with the engine: ${mib(r.peakRssBytes)})`,
  ].join('\n');
}
