import { execFileSync } from 'node:child_process';
import { watch as chokidarWatch } from 'chokidar';
import fs from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { DiffProgressPayload } from '../shared/index.ts';
import { DEFAULT_LIMITS } from '../server/config.ts';
import { createEngine } from '../server/checkpoint/index.ts';
import { feedIgnoreFor, LiveFeed, type FeedRun } from '../server/live/index.ts';
import { resolveWorkspace, type ResolvedWorkspace } from '../server/workspace/index.ts';
import { ensureTrees, gitEnv } from './trees.ts';

/**
 * The live feed's cost on the 20,000-file bench trees: watching folders (watches held, time to
 * ready, memory, the longest event-loop block while the folders are walked, how soon edits show)
 * and periodic checks (the engine's check of the run's changed paths: its cost, the pause the feed
 * chose, and the CPU share of the process over a window). Baselines in the same run: one
 * `git status` (git tree), the run's checkpoint, and the per-file watcher the feed used before
 * (chokidar with the same ignore rules).
 */

export interface LiveTreeResult {
  tree: string;
  files: number;
  baseline: { gitStatusMs: number | null; checkpointMs: number; perFileWatches: number; perFileReadyMs: number };
  watch: {
    folders: number;
    kernelWatches: number;
    watchesPer10kFiles: number;
    readyMs: number;
    longestBlockMs: number;
    rssMiB: number;
    editsSeenMs: number;
  };
  poll: { checks: number; checkMs: number; intervalMs: number; cpuShare: number; windowMs: number };
}

const EDITS = 20;
const POLL_WINDOW_MS = 15_000;

function kernelWatches(): number {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) !== 'anon_inode:inotify') continue;
      n += fs
        .readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('inotify wd:')).length;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

async function resolved(root: string): Promise<ResolvedWorkspace> {
  const ws = await resolveWorkspace(root, { workspaceRoots: null, homeDir: '/nonexistent' });
  if (!ws.ok) throw new Error(`workspace refused: ${ws.reason}`);
  return ws;
}

const until = async (ok: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('the live feed did not report in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

async function measureTree(name: string, root: string, files: string[], isGit: boolean): Promise<LiveTreeResult> {
  const ws = await resolved(root);
  const gitStatusMs = isGit
    ? (() => {
        const t = performance.now();
        execFileSync('git', ['status', '--porcelain=v2', '-z'], { cwd: root, env: gitEnv(), maxBuffer: 1 << 26 });
        return performance.now() - t;
      })()
    : null;
  const engine = createEngine({ limits: DEFAULT_LIMITS, dbPath: null });
  const edited = files.filter((_, i) => i % Math.floor(files.length / EDITS) === 0).slice(0, EDITS);
  const originals = edited.map((rel) => fs.readFileSync(path.join(root, rel)));
  try {
    const t0 = performance.now();
    await engine.start({ sessionId: 'b', changeId: 'run:w', runId: 'w', workspace: ws });
    const checkpointMs = performance.now() - t0;
    const run: FeedRun = { sessionId: 'b', runId: 'w', changeId: 'run:w', root: ws.root };
    const ignore = await feedIgnoreFor(ws, null);

    // The previous feed's watcher: one watch per file and per folder.
    const c0 = kernelWatches();
    const tc = performance.now();
    const perFile = chokidarWatch(root, {
      ignoreInitial: true,
      followSymlinks: false,
      ignored: (abs: string, stats?: { isDirectory(): boolean }) => {
        const rel = path.relative(root, abs).split(path.sep).join('/');
        if (rel === '' || rel.startsWith('..')) return false;
        return rel.endsWith('.git') || (stats?.isDirectory() === true && ignore.skipDir(rel));
      },
    });
    perFile.on('error', () => undefined);
    await new Promise<void>((resolve) => perFile.on('ready', () => resolve()));
    const perFileReadyMs = performance.now() - tc;
    const perFileWatches = kernelWatches() - c0;
    await perFile.close();

    // Watching folders.
    const events: DiffProgressPayload[] = [];
    const watched = new LiveFeed({ maxWatches: DEFAULT_LIMITS.liveFeedMaxWatches, emit: (p) => events.push(p) });
    const before = kernelWatches();
    const rss0 = process.memoryUsage().rss;
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const t1 = performance.now();
    watched.open(run, ignore);
    if (!(await watched.ready('b', 'run:w'))) throw new Error(`${name}: the feed did not watch`);
    const readyMs = performance.now() - t1;
    loop.disable();
    const folders = watched.handles().folderWatches;
    const kernel = kernelWatches() - before;
    const rssMiB = (process.memoryUsage().rss - rss0) / 2 ** 20;
    const t2 = performance.now();
    for (const rel of edited) fs.appendFileSync(path.join(root, rel), '// edited\n');
    await until(() => events.some((e) => e.touched_count >= EDITS), 10_000);
    const editsSeenMs = performance.now() - t2;
    await watched.closeAll();

    // Periodic checks: a budget of no watch at all.
    let checks = 0;
    let spent = 0;
    const polled = new LiveFeed({
      maxWatches: 0,
      emit: () => undefined,
      changedSoFar: async (r) => {
        const t = performance.now();
        const d = await engine.peek(r.sessionId, r.changeId);
        spent += performance.now() - t;
        checks++;
        return d ? d.files.map((f) => f.path) : null;
      },
    });
    const cpu0 = process.cpuUsage();
    const w0 = performance.now();
    polled.open(run, ignore);
    await new Promise((r) => setTimeout(r, POLL_WINDOW_MS));
    const cpu = process.cpuUsage(cpu0);
    const windowMs = performance.now() - w0;
    const intervalMs = polled.checkIntervalMs('b', 'run:w') ?? 0;
    await polled.closeAll();
    return {
      tree: name,
      files: files.length,
      baseline: { gitStatusMs, checkpointMs, perFileWatches, perFileReadyMs },
      watch: {
        folders,
        kernelWatches: kernel,
        watchesPer10kFiles: (folders / files.length) * 10_000,
        readyMs,
        longestBlockMs: loop.max / 1e6,
        rssMiB,
        editsSeenMs,
      },
      poll: {
        checks,
        checkMs: checks ? spent / checks : 0,
        intervalMs,
        cpuShare: (cpu.user + cpu.system) / 1_000 / windowMs,
        windowMs,
      },
    };
  } finally {
    await engine.close();
    edited.forEach((rel, i) => fs.writeFileSync(path.join(root, rel), originals[i]!));
  }
}

export async function benchLiveFeed(): Promise<LiveTreeResult[]> {
  const trees = ensureTrees((s) => process.stderr.write(`${s}\n`));
  return [
    await measureTree('git 20k (+10k ignored)', trees.gitTree, trees.gitFiles, true),
    await measureTree('plain 20k', trees.plainTree, trees.plainFiles, false),
  ];
}

const f0 = (n: number) => n.toFixed(0);
const f1 = (n: number) => n.toFixed(1);

export function formatLiveFeedBench(results: LiveTreeResult[]): string {
  const out = ['live feed (20,000-file bench trees)'];
  for (const r of results) {
    const b = r.baseline;
    out.push(
      `  ${r.tree}: baseline checkpoint ${f0(b.checkpointMs)} ms${b.gitStatusMs !== null ? `, git status ${f0(b.gitStatusMs)} ms` : ''}; ` +
        `per-file watcher (before): ${b.perFileWatches} watches, ready in ${f0(b.perFileReadyMs)} ms`,
      `    watch: ${r.watch.folders} folder watches (kernel: ${r.watch.kernelWatches}), ${f0(r.watch.watchesPer10kFiles)} per 10,000 files; ` +
        `${f1(b.perFileWatches / Math.max(1, r.watch.folders))}x fewer than per file; ` +
        `ready in ${f0(r.watch.readyMs)} ms (${f1(r.watch.readyMs / b.checkpointMs)}x the checkpoint, ${f1(r.watch.readyMs / b.perFileReadyMs)}x per file), longest event-loop block ${f1(r.watch.longestBlockMs)} ms, ` +
        `RSS +${f1(r.watch.rssMiB)} MiB; ${EDITS} edits listed after ${f0(r.watch.editsSeenMs)} ms`,
      `    poll: ${r.poll.checks} checks in ${f0(r.poll.windowMs / 1000)} s, ${f0(r.poll.checkMs)} ms each (${f1(r.poll.checkMs / b.checkpointMs)}x the checkpoint), ` +
        `pause ${f0(r.poll.intervalMs)} ms, process CPU ${(r.poll.cpuShare * 100).toFixed(1)}% of wall time`,
    );
  }
  return out.join('\n');
}
