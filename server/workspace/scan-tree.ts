import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createFsIgnore, isSqliteSidecar } from './fs-ignore.ts';
import type { PathKey } from './path-bytes.ts';

/**
 * The synchronous stat walk (runs in the scan worker: sync fs calls are several times faster than
 * fs.promises for this and keep the event loop free there). Symlinks are recorded, never followed.
 * Order is deterministic (names in byte order, a folder's files before its subfolders), so a cut
 * scan covers a well-defined part of the tree: see `listedDirs` / `seenDirs`.
 */

/** Mode codes stored per file (git's modes). */
export const MODE_FILE = 0;
export const MODE_EXEC = 1;
export const MODE_LINK = 2;
export const MODE_TEXT = ['100644', '100755', '120000'] as const;

export function modeText(code: number): string {
  return MODE_TEXT[code] ?? '100644';
}

export interface ScanRequest {
  /** Absolute real path of the workspace; every key is relative to it. */
  root: string;
  /** Folders to walk (relative keys, '' = the root). Each may itself hold a `.git`. */
  starts: PathKey[];
  /** Folders never entered (git's ignored folders). */
  pruneDirs: PathKey[];
  /** Files never recorded (git's ignored files, the server's own database files). */
  skipFiles: PathKey[];
  /** git: `.git` entries skipped, a folder holding `.git` is reported as a nested repository and not entered.
   *  filesystem: the default ignore rules and the root `.gitignore` apply. */
  mode: 'git' | 'filesystem';
  /** Root `.gitignore` text (filesystem mode only). */
  gitignoreText: string | null;
  /** Record at most this many files; finding one more sets `truncated: 'scan_files'`. */
  maxFiles: number;
  /** Soft deadline (ms from the start of the walk), checked between folders. */
  timeoutMs: number;
}

export interface ScanTable {
  paths: PathKey[];
  size: Float64Array;
  mtimeMs: Float64Array;
  ctimeMs: Float64Array;
  ino: Float64Array;
  mode: Uint8Array;
  /** Folders holding a `.git` (git mode), not entered. */
  nestedRepos: PathKey[];
  /** Folders not entered because of `pruneDirs` or the default rules. */
  prunedDirs: PathKey[];
  truncated: 'scan_files' | 'scan_time' | null;
  /** Folders whose files were all recorded. */
  listedDirs: PathKey[];
  /** Every folder met (listed or not, pruned ones included). */
  seenDirs: PathKey[];
  durationMs: number;
}

const SLASH = Buffer.from('/');

function byName(a: fs.Dirent<Buffer>, b: fs.Dirent<Buffer>): number {
  return Buffer.compare(a.name, b.name);
}

export function scanTree(req: ScanRequest): ScanTable {
  const t0 = performance.now();
  const deadline = t0 + req.timeoutMs;
  const prune = new Set(req.pruneDirs);
  const skip = new Set(req.skipFiles);
  const fsRules = req.mode === 'filesystem' ? createFsIgnore(req.gitignoreText) : null;
  const rootBuf = Buffer.from(req.root);

  const paths: PathKey[] = [];
  const size: number[] = [];
  const mtimeMs: number[] = [];
  const ctimeMs: number[] = [];
  const ino: number[] = [];
  const mode: number[] = [];
  const nestedRepos: PathKey[] = [];
  const prunedDirs: PathKey[] = [];
  const listedDirs: PathKey[] = [];
  const seenDirs: PathKey[] = [];
  let truncated: ScanTable['truncated'] = null;

  // Stack of folders to enter; the start folders count as met.
  const stack: { rel: PathKey; isStart: boolean }[] = [];
  for (let i = req.starts.length - 1; i >= 0; i--) {
    stack.push({ rel: req.starts[i]!, isStart: true });
    seenDirs.push(req.starts[i]!);
  }

  walk: while (stack.length > 0) {
    if (performance.now() > deadline) {
      truncated = 'scan_time';
      break;
    }
    const { rel, isStart } = stack.pop()!;
    const relBuf = Buffer.from(rel, 'latin1');
    const absBuf = rel === '' ? rootBuf : Buffer.concat([rootBuf, SLASH, relBuf]);
    let entries: fs.Dirent<Buffer>[];
    try {
      entries = fs.readdirSync(absBuf, { withFileTypes: true, encoding: 'buffer' });
    } catch {
      continue; // vanished or unreadable folder: nothing recorded, not "listed"
    }
    entries.sort(byName);
    if (
      req.mode === 'git' &&
      !isStart &&
      entries.some((e) => e.name.length === 4 && e.name.toString('latin1') === '.git')
    ) {
      nestedRepos.push(rel);
      continue;
    }
    const subdirs: PathKey[] = [];
    for (const e of entries) {
      const name = e.name.toString('latin1');
      if (req.mode === 'git' && name === '.git') continue;
      const key = rel === '' ? name : `${rel}/${name}`;
      if (e.isDirectory()) {
        seenDirs.push(key);
        if (prune.has(key) || (fsRules !== null && fsRules.ignoresDir(key, name))) prunedDirs.push(key);
        else subdirs.push(key);
        continue;
      }
      const link = e.isSymbolicLink();
      if (!link && !e.isFile()) continue; // fifo, socket, device: not content
      if (skip.has(key) || isSqliteSidecar(name) || (fsRules !== null && fsRules.ignoresFile(key, name))) continue;
      if (paths.length >= req.maxFiles) {
        truncated = 'scan_files';
        break walk;
      }
      let st: fs.Stats;
      try {
        st = fs.lstatSync(Buffer.concat([absBuf, SLASH, e.name]));
      } catch {
        continue; // vanished between readdir and lstat
      }
      let m: number;
      if (st.isSymbolicLink()) m = MODE_LINK;
      else if (st.isFile()) m = st.mode & 0o100 ? MODE_EXEC : MODE_FILE;
      else continue;
      paths.push(key);
      size.push(st.size);
      mtimeMs.push(st.mtimeMs);
      ctimeMs.push(st.ctimeMs);
      ino.push(st.ino);
      mode.push(m);
    }
    listedDirs.push(rel);
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push({ rel: subdirs[i]!, isStart: false });
  }

  return {
    paths,
    size: Float64Array.from(size),
    mtimeMs: Float64Array.from(mtimeMs),
    ctimeMs: Float64Array.from(ctimeMs),
    ino: Float64Array.from(ino),
    mode: Uint8Array.from(mode),
    nestedRepos,
    prunedDirs,
    truncated,
    listedDirs,
    seenDirs,
    durationMs: performance.now() - t0,
  };
}
