import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { countInotifyEvent } from './folder-watcher.ts';

/**
 * Sync points for the folder watchers, written outside every workspace. Every `fs.watch` of a
 * thread shares libuv's one inotify instance, whose queue delivers in order across all its watches:
 * once the event of a file written in the server's own private folder has come back, every change
 * made in any watched folder before that write has been delivered too (watchman's cookie, kept out
 * of the tree). A cookie in the workspace itself would be seen by whatever reads the tree at that
 * instant: `git add -A`, a copy, an editor's file list.
 */

const FLAGS = fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW;

let folder: { dir: string; watcher: fs.FSWatcher } | null = null;
const waiting = new Map<string, () => void>();
let seq = 0;
let removedAtExit = false;

function drop(): void {
  if (!folder) return;
  const { dir, watcher } = folder;
  folder = null;
  try {
    watcher.close();
  } catch {
    // closed already
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/** The private folder (mode 0700, a fresh name in the system's temp folder) and its watch. */
function opened(): string {
  if (folder) return folder.dir;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-sync-'));
  const watcher = fs.watch(dir, { persistent: false }, (_type, name) => {
    // Its events go through the same queue as the workspaces': they count towards an overflow.
    countInotifyEvent();
    if (name !== null) waiting.get(String(name))?.();
  });
  // The folder removed under it (a temp cleaner): the next sync makes a new one.
  watcher.on('error', drop);
  if (!removedAtExit) {
    removedAtExit = true;
    process.once('exit', drop);
  }
  folder = { dir, watcher };
  return dir;
}

export type SyncPointResult = { ok: true } | { ok: false; reason: 'timeout' | 'unwritable'; message: string };

/** Writes a fresh file in the private folder and answers once its own event has come back (or not within `waitMs`). */
export async function syncPoint(waitMs: number): Promise<SyncPointResult> {
  const name = `sync-${++seq}`;
  let timer: NodeJS.Timeout | undefined;
  const came = new Promise<boolean>((resolve) => {
    waiting.set(name, () => resolve(true));
    timer = setTimeout(() => resolve(false), waitMs);
  });
  let file: string;
  try {
    file = path.join(opened(), name);
    fs.closeSync(fs.openSync(file, FLAGS, 0o600));
  } catch (err) {
    clearTimeout(timer);
    waiting.delete(name);
    drop();
    return { ok: false, reason: 'unwritable', message: (err as Error).message };
  }
  const ok = await came;
  clearTimeout(timer);
  waiting.delete(name);
  fs.rmSync(file, { force: true });
  return ok ? { ok: true } : { ok: false, reason: 'timeout', message: `no event within ${waitMs} ms` };
}
