import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { scanTree, type ScanRequest, type ScanTable } from './scan-tree.ts';
import { readContents, type ReadRequest, type ReadResult } from './read-contents.ts';

/**
 * Runs walks and reads in one long-lived worker thread, so a 20,000-file walk never stalls the
 * server's event loop. If the worker cannot start (or dies), the same functions run in-thread:
 * slower for the event loop, never a lost checkpoint.
 */
export interface Scanner {
  scan(req: ScanRequest): Promise<ScanTable>;
  read(req: ReadRequest): Promise<ReadResult>;
  close(): Promise<void>;
}

type Pending = {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  op: 'scan' | 'read';
  req: ScanRequest | ReadRequest;
};

/** The worker module is TypeScript: the worker registers the same tsx loader the server runs under. */
function workerBootstrap(): string {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve('tsx/package.json');
  const pkg = JSON.parse(fs.readFileSync(pkgPath, 'utf8')) as {
    exports: Record<string, { import: { default: string } }>;
  };
  const api = pathToFileURL(path.join(path.dirname(pkgPath), pkg.exports['./esm/api']!.import.default)).href;
  const entry = new URL('./scan-worker.ts', import.meta.url).href;
  return `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
}

function runInThread(op: 'scan' | 'read', req: ScanRequest | ReadRequest): unknown {
  return op === 'scan' ? scanTree(req as ScanRequest) : readContents(req as ReadRequest);
}

export function createScanner(opts: { inThread?: boolean } = {}): Scanner {
  let worker: Worker | null = null;
  let broken = opts.inThread === true;
  let nextId = 1;
  const pending = new Map<number, Pending>();

  const failAll = () => {
    broken = true;
    worker = null;
    // Re-run what the worker was doing in this thread: callers still get their answer.
    for (const [id, p] of pending) {
      pending.delete(id);
      try {
        p.resolve(runInThread(p.op, p.req));
      } catch (err) {
        p.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
  };

  const ensureWorker = (): Worker | null => {
    if (broken) return null;
    if (worker) return worker;
    try {
      const w = new Worker(workerBootstrap(), { eval: true });
      w.on('message', (msg: { id?: number; ok?: boolean; result?: unknown; error?: string }) => {
        if (msg.id === undefined) return;
        const p = pending.get(msg.id);
        if (!p) return;
        pending.delete(msg.id);
        if (pending.size === 0) w.unref();
        if (msg.ok) p.resolve(msg.result);
        else p.reject(new Error(msg.error ?? 'scan failed'));
      });
      w.on('error', failAll);
      w.on('exit', () => {
        if (worker === w) failAll();
      });
      w.unref();
      worker = w;
      return w;
    } catch {
      broken = true;
      return null;
    }
  };
  // Start loading now: the first checkpoint should not pay for the worker's start-up.
  ensureWorker();

  const call = <T>(op: 'scan' | 'read', req: ScanRequest | ReadRequest): Promise<T> => {
    const w = ensureWorker();
    if (!w) {
      try {
        return Promise.resolve(runInThread(op, req) as T);
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject, op, req });
      w.ref();
      w.postMessage({ id, op, req });
    });
  };

  return {
    scan: (req) => call<ScanTable>('scan', req),
    read: (req) => call<ReadResult>('read', req),
    close: async () => {
      const w = worker;
      broken = true;
      worker = null;
      if (w) await w.terminate();
    },
  };
}
