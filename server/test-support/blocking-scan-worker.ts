import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';

/**
 * Tests only: the real scan worker, except that a walk of a folder holding a FIFO named
 * `block.fifo` first opens that FIFO for reading without O_NONBLOCK. The open is a real system
 * call that waits until a writer appears, the way a hung network or FUSE mount blocks readdir or
 * lstat; terminate() cannot end it. A test ends it by opening the FIFO for writing (`unblockFifo`).
 * A folder holding `exit-worker` ends the worker thread instead, as a crash would.
 */

export const BLOCK_FIFO = 'block.fifo';

parentPort?.on('message', (msg: { op?: string; req?: { root?: string } }) => {
  if (msg.op !== 'scan' || typeof msg.req?.root !== 'string') return;
  const fifo = `${msg.req.root}/${BLOCK_FIFO}`;
  let isFifo = false;
  try {
    isFifo = fs.lstatSync(fifo).isFIFO();
  } catch {
    isFifo = false;
  }
  if (isFifo) {
    // Tells a test the walk is now waiting (a test of another process cannot see the thread).
    fs.writeFileSync(`${fifo}.waiting`, '');
    fs.closeSync(fs.openSync(fifo, 'r'));
  }
  if (fs.existsSync(`${msg.req.root}/exit-worker`)) process.exit(1);
});

await import('../workspace/scan-worker.ts');
