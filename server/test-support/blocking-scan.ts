import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Tests only: folders whose walk really blocks in the worker of `blocking-scan-worker.ts`. */

export const BLOCKING_SCAN_WORKER = new URL('./blocking-scan-worker.ts', import.meta.url);

/** Exists once a walk waits on the FIFO `fifo`. */
export const waitingMarker = (fifo: string): string => `${fifo}.waiting`;
const BLOCK_FIFO = 'block.fifo';

/** Puts the FIFO that blocks the walk of `dir`; returns its path. */
export function plantBlockingFifo(dir: string): string {
  const fifo = path.join(dir, BLOCK_FIFO);
  execFileSync('mkfifo', [fifo]);
  return fifo;
}

/**
 * Releases every worker blocked opening `fifo` (a non-blocking writer lets a waiting reader's open
 * return) and removes it. Nothing waiting: the open fails with ENXIO and there is nothing to release.
 */
export function unblockFifo(fifo: string): void {
  try {
    fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
  } catch {
    // no reader waiting
  }
  fs.rmSync(fifo, { force: true });
  fs.rmSync(waitingMarker(fifo), { force: true });
}
