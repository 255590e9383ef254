import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { DEFAULT_LIMITS } from '../server/config.ts';
import { createEngine, type CheckpointEngine } from '../server/checkpoint/index.ts';
import type { ListingHow } from '../server/checkpoint/strategy.ts';
import { heldInotifyWatches } from '../server/watch/index.ts';
import { resolveWorkspace, type ResolvedWorkspace } from '../server/workspace/index.ts';
import { ensureMonorepo } from './monorepo.ts';
import { BENCH_ROOT, gitEnv, layout, writeTree } from './trees.ts';
import { median } from './stats.ts';

/**
 * Tool-call benchmark on default settings: what one tool call costs the agent (its checkpoint and
 * its completion; the write in between is not timed) in a git repository of N tracked files plus an
 * ignored node_modules, with the checkpoint watcher off (a whole `git status` per phase) and on,
 * against one `git status` measured in the same run. Each call edits one tracked file; the user
 * undoes it between calls. The first call after the engine starts is reported on its own (it lists
 * the whole tree while the watcher starts), so are a call that writes nothing and the memory the
 * watcher and its listings hold.
 *
 * The plain-folder side (`benchPlainToolCall`) does the same in a folder without git, as an agent's
 * run takes it: the run's checkpoint is held while its tool calls come and go, so a call may reuse
 * the contents the run's checkpoint kept. Its baseline is one lstat walk of the same tree (every
 * folder listed, every entry lstat'ed: what a checkpoint without a watcher does at the least).
 */

export interface ToolCallSide {
  firstCallMs: number;
  /** Median start + completion of a call that edits one file. */
  callMs: number;
  startMs: number;
  completeMs: number;
  /** Median start + completion of a call that writes nothing. */
  idleCallMs: number;
  ratio: number;
  /** Listings the watcher vouched for / all listings of the timed calls. */
  watched: string;
}

export interface ToolCallBenchResult {
  files: number;
  calls: number;
  statusMs: number;
  off: ToolCallSide;
  on: ToolCallSide;
  /** Heap and buffers the watched engine holds beyond the plain one after the same calls (after GC). */
  watcherHeldBytes: number;
  /** Heap and buffers the watched engine holds in all (its listing, the index cache, the watcher), after GC. */
  watchedEngineHeldBytes: number;
  /** inotify watches the watcher holds. */
  watches: number;
}

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heldBytes = () => {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
};

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

let seq = 0;

/** One tool call: checkpoint, `act` (not timed), completion; the ms of each phase. */
async function call(
  engine: CheckpointEngine,
  ws: ResolvedWorkspace,
  act: () => void,
  runId?: string,
): Promise<{ start: number; complete: number; changed: number }> {
  const id = `t${++seq}`;
  const t0 = performance.now();
  await engine.start({ sessionId: 'bench', changeId: id, runId: runId ?? id, workspace: ws });
  const t1 = performance.now();
  act();
  const t2 = performance.now();
  const delta = await engine.complete('bench', id);
  const t3 = performance.now();
  return { start: t1 - t0, complete: t3 - t2, changed: delta?.changed_count ?? -1 };
}

async function side(
  dir: string,
  ws: ResolvedWorkspace,
  files: string[],
  calls: number,
  watch: boolean,
  statusMs: number,
  runId?: string,
): Promise<{ result: ToolCallSide; engine: CheckpointEngine }> {
  const told: ListingHow[] = [];
  const engine = createEngine({
    limits: DEFAULT_LIMITS,
    dbPath: null,
    watchCheckpoints: watch,
    watch: { told: (_root, how) => told.push(how) },
  });
  const target = path.join(dir, files[Math.floor(files.length / 3)]!);
  const original = fs.readFileSync(target);
  let n = 0;
  const edit = () => fs.appendFileSync(target, `// call ${n++}\n`);
  const undo = () => fs.writeFileSync(target, original);
  if (runId) await engine.start({ sessionId: 'bench', changeId: runId, runId, workspace: ws });
  const first = await call(engine, ws, edit, runId);
  if (first.changed !== 1) throw new Error(`the first call listed ${first.changed} files, not 1`);
  undo();
  // The watcher is ready within the next few calls (it walks the folders in the background).
  for (let i = 0; i < 3; i++) {
    await call(engine, ws, () => undefined, runId);
    await new Promise((r) => setTimeout(r, 200));
  }
  const from = told.length;
  const starts: number[] = [];
  const completes: number[] = [];
  const idle: number[] = [];
  for (let i = 0; i < calls; i++) {
    const c = await call(engine, ws, edit, runId);
    if (c.changed !== 1) throw new Error(`call ${i} listed ${c.changed} files, not 1`);
    starts.push(c.start);
    completes.push(c.complete);
    undo();
    const q = await call(engine, ws, () => undefined, runId);
    if (q.changed !== 1 && q.changed !== 0) throw new Error(`an idle call listed ${q.changed} files`);
    idle.push(q.start + q.complete);
  }
  const timed = told.slice(from);
  const callMs = median(starts.map((s, i) => s + completes[i]!));
  return {
    engine,
    result: {
      firstCallMs: first.start + first.complete,
      callMs,
      startMs: median(starts),
      completeMs: median(completes),
      idleCallMs: median(idle),
      ratio: callMs / statusMs,
      watched: `${timed.filter((h) => 'watched' in h).length}/${timed.length}`,
    },
  };
}

export async function benchToolCall(
  opts: { files?: number; calls?: number; log?: (s: string) => void } = {},
): Promise<ToolCallBenchResult> {
  const count = opts.files ?? 100_000;
  const calls = opts.calls ?? 15;
  const log = opts.log ?? ((s: string) => process.stderr.write(`${s}\n`));
  const { dir, files } = ensureMonorepo(count, log);
  const resolvedWs = await resolveWorkspace(dir, { workspaceRoots: null, homeDir: '/nonexistent-home' });
  if (!resolvedWs.ok) throw new Error(`workspace refused: ${resolvedWs.reason}`);
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push(await gitStatusMs(dir));
  const before = heldBytes();
  const off = await side(dir, resolvedWs, files, calls, false, median(statuses));
  const offHeld = heldBytes() - before;
  await off.engine.close();
  for (let i = 0; i < 5; i++) statuses.push(await gitStatusMs(dir));
  const statusMs = median(statuses);
  const watchesBefore = heldInotifyWatches() ?? 0;
  const before2 = heldBytes();
  const on = await side(dir, resolvedWs, files, calls, true, statusMs);
  const onHeld = heldBytes() - before2;
  const watches = (heldInotifyWatches() ?? 0) - watchesBefore;
  await on.engine.close();
  for (let i = 0; i < 3; i++) statuses.push(await gitStatusMs(dir));
  const finalStatus = median(statuses);
  off.result.ratio = off.result.callMs / finalStatus;
  on.result.ratio = on.result.callMs / finalStatus;
  return {
    files: count,
    calls,
    statusMs: finalStatus,
    off: off.result,
    on: on.result,
    watcherHeldBytes: Math.max(0, onHeld - offHeld),
    watchedEngineHeldBytes: Math.max(0, onHeld),
    watches,
  };
}

const ms = (x: number) => `${x.toFixed(1)} ms`;

/** One side's line of a report: its per-call figures and its ratio to `baseline`. */
const sideLine = (name: string, s: ToolCallSide, baseline: string) =>
  `  ${name}: ${ms(s.callMs)} per call (start ${ms(s.startMs)} + completion ${ms(s.completeMs)}) = ${s.ratio.toFixed(3)}x ${baseline}; ` +
  `writes nothing ${ms(s.idleCallMs)}; first call ${ms(s.firstCallMs)}; watched listings ${s.watched}`;

export function formatToolCallBench(r: ToolCallBenchResult): string {
  const line = (name: string, s: ToolCallSide) => sideLine(name, s, 'git status');
  return [
    `tool call, ${r.files} tracked files + 10,000 ignored, ${r.calls} calls: git status ${ms(r.statusMs)}`,
    line('watcher off', r.off),
    line('watcher on ', r.on),
    `  watcher: ${r.watches} inotify watches; the watched engine holds ${(r.watchedEngineHeldBytes / 1048576).toFixed(1)} MiB ` +
      `(${(r.watcherHeldBytes / 1048576).toFixed(1)} MiB beyond the plain engine)`,
  ].join('\n');
}

export interface PlainToolCallBenchResult {
  files: number;
  calls: number;
  /** Median of one lstat walk of the whole folder, in the same run. */
  walkMs: number;
  off: ToolCallSide;
  on: ToolCallSide;
  /** inotify watches the watcher holds. */
  watches: number;
}

/** A plain folder (no git) of `count` files of 1-4 KiB, 20 per folder, generated once. */
function ensurePlainFolder(count: number, log: (s: string) => void): { dir: string; files: string[] } {
  const dir = path.join(BENCH_ROOT, `plain-${count}`);
  const files = layout(count);
  const ready = path.join(BENCH_ROOT, `plain-${count}.ready`);
  if (!fs.existsSync(ready)) {
    log(`generating a ${count}-file plain folder in ${dir} (once)...`);
    fs.rmSync(dir, { recursive: true, force: true });
    writeTree(dir, files, 1024, 4096, 11);
    fs.writeFileSync(ready, '');
  }
  return { dir, files };
}

/** One lstat walk of the folder: every folder listed, every entry lstat'ed. */
function lstatWalkMs(root: string): number {
  const t0 = performance.now();
  const folders = [root];
  for (let dir = folders.pop(); dir !== undefined; dir = folders.pop()) {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, e.name);
      if (fs.lstatSync(abs).isDirectory()) folders.push(abs);
    }
  }
  return performance.now() - t0;
}

export async function benchPlainToolCall(
  opts: { files?: number; calls?: number; log?: (s: string) => void } = {},
): Promise<PlainToolCallBenchResult> {
  const count = opts.files ?? 20_000;
  const calls = opts.calls ?? 15;
  const log = opts.log ?? ((s: string) => process.stderr.write(`${s}\n`));
  const { dir, files } = ensurePlainFolder(count, log);
  const resolvedWs = await resolveWorkspace(dir, { workspaceRoots: null, homeDir: '/nonexistent-home' });
  if (!resolvedWs.ok) throw new Error(`workspace refused: ${resolvedWs.reason}`);
  const walks: number[] = [];
  for (let i = 0; i < 5; i++) walks.push(lstatWalkMs(dir));
  const off = await side(dir, resolvedWs, files, calls, false, median(walks), 'run-off');
  await off.engine.close();
  for (let i = 0; i < 5; i++) walks.push(lstatWalkMs(dir));
  const watchesBefore = heldInotifyWatches() ?? 0;
  const on = await side(dir, resolvedWs, files, calls, true, median(walks), 'run-on');
  const watches = (heldInotifyWatches() ?? 0) - watchesBefore;
  await on.engine.close();
  for (let i = 0; i < 3; i++) walks.push(lstatWalkMs(dir));
  const walkMs = median(walks);
  off.result.ratio = off.result.callMs / walkMs;
  on.result.ratio = on.result.callMs / walkMs;
  return { files: count, calls, walkMs, off: off.result, on: on.result, watches };
}

export function formatPlainToolCallBench(r: PlainToolCallBenchResult): string {
  const line = (name: string, s: ToolCallSide) => sideLine(name, s, 'the lstat walk');
  return [
    `tool call in a run, plain folder of ${r.files} files, ${r.calls} calls: one lstat walk ${ms(r.walkMs)}`,
    line('watcher off', r.off),
    line('watcher on ', r.on),
    `  watcher: ${r.watches} inotify watches`,
  ].join('\n');
}
