import { parentPort, threadId } from 'node:worker_threads';

/**
 * Tests only: a scan worker that answers every call with the id of the thread it runs in, so a
 * test can tell whether two calls ran in the same worker thread.
 */

parentPort?.on('message', (msg: { id: number }) => {
  parentPort!.postMessage({ id: msg.id, ok: true, result: { threadId } });
});
parentPort?.postMessage({ ready: true });
