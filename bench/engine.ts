import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { DEFAULT_LIMITS } from '../server/config.ts';
import { createEngine, type CheckpointEngine, type DeltaResult } from '../server/checkpoint/index.ts';
import { resolveWorkspace, type ResolvedWorkspace } from '../server/workspace/index.ts';
import { httpRun, startBenchServer } from './http-run.ts';
import { ensureTrees, git, gitEnv } from './trees.ts';
import { median } from './stats.ts';

/**
 * Engine benchmark: checkpoint and completion (50 modified / 10 added / 5 deleted / 3 renamed) on
 * the cached trees, against `git status` (git tree) and a bare sync walk + read (plain tree),
 * interleaved rounds, medians; plus resident memory per live clean git checkpoint.
 */

export interface EngineBenchResult {
  rounds: number;
  git: {
    statusMs: number;
    checkpointMs: number;
    completionMs: number;
    ratio: number;
    checkpointRatio: number;
    maxCompletionMs: number;
    /** The same run through the server over HTTP (`run.started` / `run.completed` answers). */
    http: { checkpointMs: number; completionMs: number; ratio: number; checkpointRatio: number; counts: string };
    /** This process (engine and bench) at its largest during the rounds. */
    peakRssBytes: number;
    /** The server process at its largest (VmHWM) over the HTTP rounds. */
    serverPeakRssBytes: number;
  };
  plain: {
    walkReadMs: number;
    checkpointMs: number;
    completionMs: number;
    ratio: number;
    maxCompletionMs: number;
    snapshotBytes: number;
  };
  memory: { cleanGitCheckpointBytes: number; plainCheckpointRssBytes: number };
}

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function gitStatusMs(cwd: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) =>
    execFile(
      'git',
      ['status', '--porcelain=v2', '-z', '--untracked-files=all'],
      { cwd, env: gitEnv(), maxBuffer: 1 << 26 },
      (err) => (err ? reject(new Error(err.message, { cause: err })) : resolve(performance.now() - t0)),
    ),
  );
}

/** The floor outside git: one synchronous readdir + lstat walk and a read of every snapshot-eligible file. */
function walkAndRead(root: string, maxBytes: number): number {
  const t0 = performance.now();
  const stack = [root];
  let bytes = 0;
  while (stack.length) {
    const dir = stack.pop()!;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, e.name);
      if (e.isDirectory()) stack.push(abs);
      else {
        const st = fs.lstatSync(abs);
        if (st.isFile() && st.size <= maxBytes) bytes += fs.readFileSync(abs).length;
      }
    }
  }
  if (bytes === 0) throw new Error('empty tree');
  return performance.now() - t0;
}

/** The change every round makes: 50 modified, 10 added, 5 deleted, 3 renamed (exact). */
function applyChange(root: string, files: string[], round: number): () => void {
  const saved = new Map<string, Buffer>();
  const stride = Math.floor(files.length / 70);
  const pickAt = (i: number) => files[(i * stride + round * 7) % files.length]!;
  const modified = Array.from({ length: 50 }, (_, i) => pickAt(i));
  const deleted = Array.from({ length: 5 }, (_, i) => pickAt(50 + i));
  const renamed = Array.from({ length: 3 }, (_, i) => pickAt(55 + i));
  for (const f of [...modified, ...deleted, ...renamed]) saved.set(f, fs.readFileSync(path.join(root, f)));
  for (const f of modified) fs.appendFileSync(path.join(root, f), `// edited in round ${round}\n`);
  for (const f of deleted) fs.rmSync(path.join(root, f));
  for (const f of renamed) {
    fs.mkdirSync(path.join(root, 'moved'), { recursive: true });
    fs.renameSync(path.join(root, f), path.join(root, 'moved', f.replace(/\//g, '_')));
  }
  for (let i = 0; i < 10; i++) {
    fs.mkdirSync(path.join(root, 'added'), { recursive: true });
    fs.writeFileSync(path.join(root, 'added', `new${i}.ts`), `export const added${i} = ${round};\n`);
  }
  const old = new Date(Date.now() - 24 * 3600_000);
  return () => {
    fs.rmSync(path.join(root, 'moved'), { recursive: true, force: true });
    fs.rmSync(path.join(root, 'added'), { recursive: true, force: true });
    for (const [f, bytes] of saved) {
      fs.writeFileSync(path.join(root, f), bytes);
      fs.utimesSync(path.join(root, f), old, old);
    }
  };
}

function assertCounts(d: DeltaResult | null, where: string): DeltaResult {
  if (!d) throw new Error(`${where}: no checkpoint`);
  const got = `${d.modified_count}/${d.added_count}/${d.deleted_count}/${d.renamed_count} truncated=${d.truncated}`;
  if (got !== '50/10/5/3 truncated=false')
    throw new Error(`${where}: expected 50/10/5/3 without truncation, got ${got} ${d.truncated_reasons.join(',')}`);
  return d;
}

async function resolved(dir: string): Promise<ResolvedWorkspace> {
  const ws = await resolveWorkspace(dir, { workspaceRoots: null, homeDir: '/nonexistent-home' });
  if (!ws.ok) throw new Error(ws.message);
  return ws;
}

async function timedRun(
  engine: CheckpointEngine,
  ws: ResolvedWorkspace,
  root: string,
  files: string[],
  round: number,
  id: string,
  check: boolean,
) {
  const t0 = performance.now();
  await engine.start({ sessionId: 'bench', changeId: id, runId: id, workspace: ws });
  const t1 = performance.now();
  const revert = applyChange(root, files, round);
  const t2 = performance.now();
  const delta = await engine.complete('bench', id);
  const t3 = performance.now();
  revert();
  // The warm-up round (cold caches, worker start-up) is not asserted.
  if (check) assertCounts(delta, `${id} round ${round}`);
  return { checkpointMs: t1 - t0, completionMs: t3 - t2 };
}

export async function benchEngine(
  opts: { rounds?: number; log?: (s: string) => void } = {},
): Promise<EngineBenchResult> {
  const log = opts.log ?? ((s: string) => void process.stderr.write(`${s}\n`));
  const rounds = Math.max(5, opts.rounds ?? 7);
  const trees = ensureTrees(log);
  git(trees.gitTree, 'update-index', '-q', '--refresh');
  const limits = Object.freeze({
    ...DEFAULT_LIMITS,
    maxScannedFiles: 50_000,
    maxChangedFiles: 100,
    scanTimeoutMs: 30_000,
  });
  // The soft scan deadline is raised too: on a loaded shared machine a 1 s walk deadline would cut the scan and the
  // run would measure a truncated result. Ratios are what compare; they are measured in the same rounds.
  const engine = createEngine({ limits, dbPath: null });
  const gitWs = await resolved(trees.gitTree);
  const plainWs = await resolved(trees.plainTree);
  const g = {
    status: [] as number[],
    cp: [] as number[],
    done: [] as number[],
    hcp: [] as number[],
    hdone: [] as number[],
  };
  const httpCounts = new Set<string>();
  const http = await startBenchServer();
  let peak = process.memoryUsage().rss;
  const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const p = { walk: [] as number[], cp: [] as number[], done: [] as number[] };
  try {
    // Round -1 warms caches, the worker and git; it is not counted.
    for (let r = -1; r < rounds; r++) {
      const status = await gitStatusMs(trees.gitTree);
      const gr = await timedRun(engine, gitWs, trees.gitTree, trees.gitFiles, r + 1, `git${r}`, r >= 0);
      git(trees.gitTree, 'update-index', '-q', '--refresh');
      const hr = await httpRun(http, trees.gitTree, `h${r}`, () => applyChange(trees.gitTree, trees.gitFiles, r + 1));
      git(trees.gitTree, 'update-index', '-q', '--refresh');
      const walk = walkAndRead(trees.plainTree, limits.maxSnapshotBytes);
      const pr = await timedRun(engine, plainWs, trees.plainTree, trees.plainFiles, r + 1, `plain${r}`, r >= 0);
      if (r < 0) continue;
      g.status.push(status);
      g.cp.push(gr.checkpointMs);
      g.done.push(gr.completionMs);
      g.hcp.push(hr.checkpointMs);
      g.hdone.push(hr.completionMs);
      httpCounts.add(hr.counts);
      p.walk.push(walk);
      p.cp.push(pr.checkpointMs);
      p.done.push(pr.completionMs);
      log(
        `round ${r + 1}: git status ${status.toFixed(0)} ms | git checkpoint ${gr.checkpointMs.toFixed(0)} + completion ${gr.completionMs.toFixed(0)} ms | ` +
          `HTTP ${hr.checkpointMs.toFixed(0)} + ${hr.completionMs.toFixed(0)} ms | ` +
          `walk+read ${walk.toFixed(0)} ms | plain checkpoint ${pr.checkpointMs.toFixed(0)} + completion ${pr.completionMs.toFixed(0)} ms`,
      );
    }

    // Memory: resident set (all threads) added per live clean git checkpoint, after GC.
    const live = 5;
    gc();
    await new Promise((r) => setTimeout(r, 50));
    gc();
    const rss0 = process.memoryUsage().rss;
    for (let i = 0; i < live; i++)
      await engine.start({ sessionId: 'mem', changeId: `m${i}`, runId: `m${i}`, workspace: gitWs });
    gc();
    await new Promise((r) => setTimeout(r, 50));
    gc();
    const rss1 = process.memoryUsage().rss;
    for (let i = 0; i < live; i++) engine.drop('mem', `m${i}`);
    gc();
    const rss2 = process.memoryUsage().rss;
    await engine.start({ sessionId: 'mem', changeId: 'plain', runId: 'plain', workspace: plainWs });
    const snapshotBytes = engine.memoryBytes();
    gc();
    const rss3 = process.memoryUsage().rss;
    engine.drop('mem', 'plain');

    clearInterval(sample);
    const gitCp = median(g.cp);
    const gitDone = median(g.done);
    const statusMs = median(g.status);
    const plainCp = median(p.cp);
    const plainDone = median(p.done);
    return {
      rounds,
      git: {
        statusMs,
        checkpointMs: gitCp,
        completionMs: gitDone,
        ratio: (gitCp + gitDone) / statusMs,
        checkpointRatio: gitCp / statusMs,
        maxCompletionMs: Math.max(...g.done),
        http: {
          checkpointMs: median(g.hcp),
          completionMs: median(g.hdone),
          ratio: (median(g.hcp) + median(g.hdone)) / statusMs,
          checkpointRatio: median(g.hcp) / statusMs,
          counts: [...httpCounts].join('; '),
        },
        peakRssBytes: peak,
        serverPeakRssBytes: http.peakRssBytes(),
      },
      plain: {
        walkReadMs: median(p.walk),
        checkpointMs: plainCp,
        completionMs: plainDone,
        ratio: (plainCp + plainDone) / median(p.walk),
        maxCompletionMs: Math.max(...p.done),
        snapshotBytes,
      },
      memory: {
        cleanGitCheckpointBytes: Math.max(0, (rss1 - rss0) / live),
        plainCheckpointRssBytes: Math.max(0, rss3 - rss2),
      },
    };
  } finally {
    clearInterval(sample);
    await http.close();
    await engine.close();
  }
}

export function formatEngineBench(r: EngineBenchResult): string {
  const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  return [
    `Engine (medians of ${r.rounds} interleaved rounds; change = 50 modified / 10 added / 5 deleted / 3 renamed)`,
    `  git tree (20,000 tracked files + ignored node_modules of 10,000):`,
    `    git status --porcelain=v2 -z --untracked-files=all  ${ms(r.git.statusMs)}`,
    `    checkpoint ${ms(r.git.checkpointMs)} = ${r.git.checkpointRatio.toFixed(2)}x git status   target <= 1.5x`,
    `    completion ${ms(r.git.completionMs)} (max ${ms(r.git.maxCompletionMs)})`,
    `    (checkpoint + completion) / git status = ${r.git.ratio.toFixed(2)}x   target <= 3x`,
    `    over HTTP: run.started ${ms(r.git.http.checkpointMs)} = ${r.git.http.checkpointRatio.toFixed(2)}x, run.completed ${ms(r.git.http.completionMs)}; together ${r.git.http.ratio.toFixed(2)}x git status   target <= 3.6x (${r.git.http.counts})`,
    `    server process peak RSS ${mib(r.git.serverPeakRssBytes)}   target < 300 MiB (bench process with the engine: ${mib(r.git.peakRssBytes)})`,
    `    resident memory per live clean checkpoint = ${mib(r.memory.cleanGitCheckpointBytes)}   target < 8 MiB`,
    `  plain tree (20,000 files of 1-8 KiB, no git):`,
    `    sync readdir+lstat walk + read of snapshot-eligible files  ${ms(r.plain.walkReadMs)}`,
    `    checkpoint ${ms(r.plain.checkpointMs)}, completion ${ms(r.plain.completionMs)} (max ${ms(r.plain.maxCompletionMs)})`,
    `    (checkpoint + completion) / walk+read = ${r.plain.ratio.toFixed(2)}x   target <= 2x`,
    `    snapshot held ${mib(r.plain.snapshotBytes)}, resident memory added ${mib(r.memory.plainCheckpointRssBytes)}`,
    `  every completion < 1,000 ms: ${Math.max(r.git.maxCompletionMs, r.plain.maxCompletionMs) < 1000 ? 'yes' : 'NO'}`,
  ].join('\n');
}
