import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Db } from './database.ts';

/**
 * Moves the database's WAL checkpoints off the server's event loop. SQLite runs an automatic
 * checkpoint inside the commit that takes the WAL past 1,000 pages, in the committing thread:
 * copying megabytes into the database file and syncing it blocked the server's loop for 13-99 ms
 * every few completions (the contents of their files go into the same database). Here the server's
 * connection checkpoints by itself only past a far larger backstop, and a worker thread with its
 * own connection runs a passive checkpoint a few times a second (passive: it never waits for, and
 * never blocks, a reader or the writer).
 */

export interface WalCheckpointer {
  /** Stops the worker (its connection closes); resolves once it has exited. */
  close(): Promise<void>;
}

export interface WalCheckpointerOptions {
  /** Time between two passive checkpoints (ms). Default 250. */
  everyMs?: number;
  /** WAL pages past which the server's own connection checkpoints anyway (the worker is gone or stuck). Default 16,384 (64 MiB). */
  backstopPages?: number;
  log?: (message: string) => void;
}

// Plain CommonJS, evaluated in the worker: it needs only the driver.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    // SQLITE_BUSY: another checkpoint runs now; the next tick tries again.
    if (err && err.code !== 'SQLITE_BUSY') parentPort.postMessage({ failed: String(err.message) });
  }
}, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/** Starts checkpointing `db`'s file from a worker thread; null (and the default behaviour) for an in-memory database. */
export function startWalCheckpointer(db: Db, opts: WalCheckpointerOptions = {}): WalCheckpointer | null {
  if (db.memory) return null;
  const log = opts.log ?? (() => undefined);
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  let worker: Worker;
  try {
    worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { file: db.name, driver, everyMs: opts.everyMs ?? 250 },
    });
  } catch (err) {
    log(`WAL checkpoints stay in the server's thread: ${(err as Error).message}`);
    return null;
  }
  db.pragma(`wal_autocheckpoint = ${opts.backstopPages ?? 16_384}`);
  worker.unref();
  let failedOnce = false;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const restoreDefault = () => {
    if (db.open) db.pragma('wal_autocheckpoint = 1000');
  };
  worker.on('message', (m: { failed?: string }) => {
    if (m.failed && !failedOnce) {
      failedOnce = true;
      log(`a WAL checkpoint failed in the checkpoint thread: ${m.failed}`);
    }
  });
  worker.on('error', (err) => {
    log(`the WAL checkpoint thread stopped (${err.message}); checkpoints go back to the server's thread`);
    restoreDefault();
  });
  return {
    async close() {
      // Held again until it has exited: a caller awaiting this as the last thing it does (a serve
      // that failed to listen) would otherwise see the process end first.
      worker.ref();
      worker.postMessage('close');
      await exited;
      restoreDefault();
    },
  };
}
