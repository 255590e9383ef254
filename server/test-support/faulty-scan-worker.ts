import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { FAULTY_READ_MESSAGE, FAULTY_WALK_MESSAGE } from './faulty-scan.ts';

/**
 * Tests only: the real scan worker, except that it answers wrongly for folders holding a marker,
 * the way a bug in the walk or the reader would: a read under `fail-read` fails with
 * `FAULTY_READ_MESSAGE`, a walk under `fail-scan` fails with `FAULTY_WALK_MESSAGE`, a walk under `bad-scan` answers an empty object instead of a table. The
 * fault's answer is posted first; the real worker's later answer to the same call is ignored.
 */

parentPort?.on('message', (msg: { id?: number; op?: string; req?: { root?: string } }) => {
  const root = msg.req?.root;
  if (typeof root !== 'string') return;
  if (msg.op === 'read' && fs.existsSync(`${root}/fail-read`)) {
    parentPort!.postMessage({ id: msg.id, ok: false, error: FAULTY_READ_MESSAGE });
  } else if (msg.op === 'scan' && fs.existsSync(`${root}/fail-scan`)) {
    parentPort!.postMessage({ id: msg.id, ok: false, error: FAULTY_WALK_MESSAGE });
  } else if (msg.op === 'scan' && fs.existsSync(`${root}/bad-scan`)) {
    parentPort!.postMessage({ id: msg.id, ok: true, result: {} });
  }
});

await import('../workspace/scan-worker.ts');
