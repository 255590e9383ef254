import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { scanTree, type ScanRequest, type ScanTable } from './scan-tree.ts';
import { readContents, type ReadRequest, type ReadResult } from './read-contents.ts';

/**
 * Runs walks and reads in a small pool of worker threads, so a 20,000-file walk never stalls the
 * server's event loop and one workspace's slow scan never waits in line behind another's.
 *
 * Every call has a hard deadline. A worker that misses it is terminated and dropped (the next call
 * gets a fresh one) and the call fails with `ScanDeadlineError`, which callers report as
 * `scan_time`. A worker blocked inside a system call (a hung network or FUSE mount) cannot be
 * stopped by terminate(): it is counted as stuck until it exits, never reused, and with too many
 * stuck workers new calls fail at once instead of piling up threads. A worker that dies fails its
 * call with `ScanWorkerError`; the work is never re-run on the main thread, which a hanging file
 * system would freeze. Only when no worker can be started at all do walks and reads run in-thread.
 */
export interface Scanner {
  scan(req: ScanRequest): Promise<ScanTable>;
  read(req: ReadRequest): Promise<ReadResult>;
  /** Workers terminated that have not exited (blocked in a system call): they keep the process from exiting. */
  stuck(): number;
  /** Terminates every worker; waits for them at most `waitMs`. */
  close(waitMs?: number): Promise<void>;
}

export type ScanOp = 'scan' | 'read';

export interface ScannerOptions {
  /** Run everything in this thread (tests of the fallback). */
  inThread?: boolean;
  /** Hard deadline (ms) of one call, from the moment a ready worker receives it. */
  deadlineMs?: (op: ScanOp, req: ScanRequest | ReadRequest) => number;
  /** Most workers running calls at once. */
  maxWorkers?: number;
  /** Most workers left stuck before new calls fail at once. */
  maxStuck?: number;
  /**
   * Tests only: every scan request carries this fixed clock step, so its soft deadline trips after a
   * known number of folders (see `ScanRequest.clockStepMs`). Absent in the server.
   */
  walkClockStepMs?: number;
  /** The worker module (tests use one that really blocks). */
  workerUrl?: URL;
  /**
   * On close, hand the ready idle workers to the next scanner of the same module in this process
   * instead of terminating them, and start from those first (`idleWorkers`). Tests start hundreds
   * of servers in one process, and a worker's start costs more than most of their scans. The
   * server never sets it: one per process, closed as the process ends.
   */
  reuseWorkers?: boolean;
  log?: (message: string) => void;
}

/** Most idle workers kept per worker module for `reuseWorkers`. */
const MAX_IDLE_WORKERS = 4;

/**
 * Ready workers that closed scanners left idle, by worker module: each is unreferenced (it keeps no
 * process alive) and leaves the list if it dies while it waits.
 */
const idleWorkers = new Map<string, { worker: Worker; drop: () => void }[]>();

function takeIdleWorker(module: string): Worker | null {
  const kept = idleWorkers.get(module)?.pop();
  if (!kept) return null;
  kept.worker.off('exit', kept.drop);
  kept.worker.off('error', kept.drop);
  return kept.worker;
}

/**
 * Puts `worker` on the idle list of `module`, once `detach` has taken its scanner's listeners off;
 * false (and nothing detached) when the list is full.
 */
function keepIdleWorker(module: string, worker: Worker, detach: () => void): boolean {
  const list = idleWorkers.get(module) ?? [];
  if (list.length >= MAX_IDLE_WORKERS) return false;
  detach();
  const entry = {
    worker,
    drop: () => {
      const i = list.indexOf(entry);
      if (i >= 0) list.splice(i, 1);
    },
  };
  worker.once('exit', entry.drop);
  worker.once('error', entry.drop);
  worker.unref();
  list.push(entry);
  idleWorkers.set(module, list);
  return true;
}

/** The call missed its hard deadline; its worker was terminated. */
export class ScanDeadlineError extends Error {}
/** The worker running the call died, or too many workers are stuck. */
export class ScanWorkerError extends Error {}

/** The scan's own soft deadline, plus room for one slow folder, before the worker is given up. */
export function defaultDeadlineMs(op: ScanOp, req: ScanRequest | ReadRequest): number {
  if (op === 'scan') {
    const soft = (req as ScanRequest).timeoutMs;
    return soft + Math.max(soft, 5_000);
  }
  return 60_000;
}

const DEFAULT_MAX_WORKERS = 3;
const DEFAULT_MAX_STUCK = 8;
/** A worker not ready after this long is treated as one that cannot start. */
const START_TIMEOUT_MS = 30_000;
/** Failed starts in a row after which waiting calls fail instead of starting yet another worker. */
const MAX_START_FAILURES = 3;

/**
 * The worker's start: the compiled module as is, or (run from the TypeScript sources) through the
 * same tsx loader the server runs under.
 */
function workerBootstrap(entry: URL): string {
  if (!entry.pathname.endsWith('.ts')) return `import(${JSON.stringify(entry.href)})`;
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve('tsx/package.json');
  const pkg = JSON.parse(fs.readFileSync(pkgPath, 'utf8')) as {
    exports: Record<string, { import: { default: string } }>;
  };
  const api = pathToFileURL(path.join(path.dirname(pkgPath), pkg.exports['./esm/api']!.import.default)).href;
  return `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`;
}

function runInThread(op: ScanOp, req: ScanRequest | ReadRequest): unknown {
  return op === 'scan' ? scanTree(req as ScanRequest) : readContents(req as ReadRequest);
}

interface Job {
  id: number;
  op: ScanOp;
  req: ScanRequest | ReadRequest;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  timer: NodeJS.Timeout | null;
  /** Takes this scanner's listeners off the worker (before it goes to another scanner). */
  detach: () => void;
}

type WorkerMessage = { ready?: true; id?: number; ok?: boolean; result?: unknown; error?: string };

export function createScanner(opts: ScannerOptions = {}): Scanner {
  const deadlineOf = opts.deadlineMs ?? defaultDeadlineMs;
  const maxWorkers = Math.max(1, opts.maxWorkers ?? DEFAULT_MAX_WORKERS);
  const maxStuck = Math.max(0, opts.maxStuck ?? DEFAULT_MAX_STUCK);
  // The worker module sits beside this one, in the same language (`.ts` in the checkout, `.js` built).
  const entry =
    opts.workerUrl ?? new URL(`./scan-worker${path.extname(new URL(import.meta.url).pathname)}`, import.meta.url);
  const log = opts.log ?? (() => undefined);
  let inThread = opts.inThread === true;
  let startedOnce = false;
  let startFailures = 0;
  let closed = false;
  let nextId = 1;
  const slots = new Set<Slot>();
  const queue: Job[] = [];
  const stuck = new Set<Worker>();

  /** Drops a worker from the pool for good; it counts as stuck until it really exits. */
  const retire = (slot: Slot) => {
    if (!slots.delete(slot)) return;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const w = slot.worker;
    stuck.add(w);
    w.unref();
    void w.terminate().catch(() => undefined);
  };

  const settle = (slot: Slot) => {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.job = null;
    slot.worker.unref();
    pump();
  };

  const failStart = (slot: Slot | null, why: string) => {
    if (slot) retire(slot);
    startFailures++;
    if (!startedOnce) {
      // No worker has ever started here: the in-thread fallback keeps checkpoints working.
      log(`scan worker cannot start (${why}); scanning in the main thread`);
      inThread = true;
      for (const job of queue.splice(0)) runHere(job);
      return;
    }
    log(`a scan worker failed to start (${why})`);
    if (startFailures >= MAX_START_FAILURES) {
      for (const job of queue.splice(0)) job.reject(new ScanWorkerError(`scan workers fail to start: ${why}`));
      startFailures = 0;
      return;
    }
    pump();
  };

  const spawn = (): Slot | null => {
    const reused = opts.reuseWorkers === true ? takeIdleWorker(entry.href) : null;
    let w: Worker;
    try {
      w = reused ?? new Worker(workerBootstrap(entry), { eval: true });
    } catch (err) {
      failStart(null, String(err));
      return null;
    }
    const slot: Slot = { worker: w, ready: reused !== null, job: null, timer: null, detach: () => undefined };
    slots.add(slot);
    if (reused) startedOnce = true;
    else {
      slot.timer = setTimeout(() => failStart(slot, 'not ready in time'), START_TIMEOUT_MS);
      slot.timer.unref();
    }
    const onMessage = (msg: WorkerMessage) => {
      if (msg.ready) {
        if (slot.timer) clearTimeout(slot.timer);
        slot.timer = null;
        slot.ready = true;
        startedOnce = true;
        startFailures = 0;
        w.unref();
        pump();
        return;
      }
      const job = slot.job;
      if (!job || msg.id !== job.id) return;
      settle(slot);
      if (msg.ok) job.resolve(msg.result);
      else job.reject(new Error(msg.error ?? 'scan failed'));
    };
    const died = (why: string) => {
      const job = slot.job;
      const wasReady = slot.ready;
      if (slots.has(slot)) {
        slots.delete(slot);
        if (slot.timer) clearTimeout(slot.timer);
      }
      if (job) {
        log(`scan worker died during a ${job.op} of ${job.req.root}: ${why}`);
        job.reject(new ScanWorkerError(`the scan worker died: ${why}`));
      }
      if (!wasReady && !job) failStart(slot, why);
      else pump();
    };
    const onError = (err: Error) => died(err.message);
    const onExit = (code: number) => {
      stuck.delete(w);
      if (slots.has(slot)) died(`exit ${code}`);
    };
    w.on('message', onMessage);
    w.on('error', onError);
    w.on('exit', onExit);
    slot.detach = () => {
      w.off('message', onMessage);
      w.off('error', onError);
      w.off('exit', onExit);
    };
    w.unref();
    return slot;
  };

  const runHere = (job: Job) => {
    try {
      job.resolve(runInThread(job.op, job.req));
    } catch (err) {
      job.reject(err instanceof Error ? err : new Error(String(err)));
    }
  };

  const give = (slot: Slot, job: Job) => {
    slot.job = job;
    slot.worker.ref();
    const ms = deadlineOf(job.op, job.req);
    slot.timer = setTimeout(() => {
      if (slot.job !== job) return;
      slot.job = null;
      log(`${job.op} of ${job.req.root} missed its ${ms} ms deadline; its worker is terminated`);
      retire(slot);
      job.reject(new ScanDeadlineError(`${job.op} missed its ${ms} ms deadline`));
      pump();
    }, ms);
    slot.worker.postMessage({ id: job.id, op: job.op, req: job.req });
  };

  /** Hands queued calls to idle ready workers, starting workers up to the cap. */
  function pump() {
    while (queue.length > 0 && !closed) {
      if (inThread) {
        runHere(queue.shift()!);
        continue;
      }
      const idle = [...slots].find((s) => s.ready && s.job === null);
      if (idle) {
        give(idle, queue.shift()!);
        continue;
      }
      const starting = [...slots].filter((s) => !s.ready).length;
      // Start one worker per waiting call, up to the cap (a starting worker takes the next call).
      if (slots.size < maxWorkers && starting < queue.length) {
        if (spawn() || inThread) continue;
      }
      // Calls wait for starting workers: those keep the process alive until they answer.
      for (const s of slots) if (!s.ready) s.worker.ref();
      return;
    }
  }

  const call = <T>(op: ScanOp, req: ScanRequest | ReadRequest): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (closed) {
        reject(new ScanWorkerError('the scanner is closed'));
        return;
      }
      if (!inThread && stuck.size >= maxStuck) {
        log(`${stuck.size} scan workers are stuck in the file system; ${op} of ${req.root} not started`);
        reject(new ScanWorkerError(`${stuck.size} scan workers are stuck`));
        return;
      }
      queue.push({ id: nextId++, op, req, resolve: resolve as (v: unknown) => void, reject });
      pump();
    });

  // Start one worker now: the first checkpoint should not pay for its start-up.
  if (!inThread) spawn();

  return {
    scan: (req) =>
      call<ScanTable>('scan', opts.walkClockStepMs === undefined ? req : { ...req, clockStepMs: opts.walkClockStepMs }),
    read: (req) => call<ReadResult>('read', req),
    stuck: () => stuck.size,
    close: async (waitMs = 2_000) => {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new ScanWorkerError('the scanner is closed'));
      // Ready idle workers may go to the next scanner (`reuseWorkers`); every other one is terminated.
      for (const s of [...slots]) {
        if (opts.reuseWorkers !== true || !s.ready || s.job !== null) continue;
        if (!keepIdleWorker(entry.href, s.worker, s.detach)) break;
        slots.delete(s);
      }
      const all = [...slots].map((s) => s.worker);
      for (const s of [...slots]) {
        const job = s.job;
        retire(s);
        job?.reject(new ScanWorkerError('the scanner is closed'));
      }
      const exited = all.map((w) => new Promise<void>((resolve) => w.once('exit', () => resolve())));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(exited),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, waitMs);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
