import { parentPort } from 'node:worker_threads';
import { scanTree, type ScanRequest } from './scan-tree.ts';
import { readContents, type ReadRequest } from './read-contents.ts';

/** The scan worker: runs the synchronous walk and reads off the main thread. */

const own = (a: { buffer: ArrayBufferLike }): ArrayBuffer => a.buffer as ArrayBuffer;

export type WorkerRequest = { id: number; op: 'scan'; req: ScanRequest } | { id: number; op: 'read'; req: ReadRequest };

parentPort?.on('message', (msg: WorkerRequest) => {
  try {
    if (msg.op === 'scan') {
      const r = scanTree(msg.req);
      parentPort!.postMessage(
        { id: msg.id, ok: true, result: r },
        [r.size, r.mtimeMs, r.ctimeMs, r.ino, r.mode].map(own),
      );
    } else {
      const r = readContents(msg.req);
      parentPort!.postMessage(
        { id: msg.id, ok: true, result: r },
        [r.block, r.offset, r.length, r.oids, r.hashed, r.binary, r.missing, r.unreadable, r.size].map(own),
      );
    }
  } catch (err) {
    parentPort!.postMessage({ id: msg.id, ok: false, error: err instanceof Error ? err.message : String(err) });
  }
});
parentPort?.postMessage({ ready: true });
