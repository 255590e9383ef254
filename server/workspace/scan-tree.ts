import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createFsIgnore, isSqliteSidecar, isWatchCookie } from './fs-ignore.ts';
import type { PathKey } from '../paths/index.ts';
import { isLongPath, openLongFolder } from '../fs/index.ts';

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
  /**
   * Tests only: the walk's clock reads 0, step, 2 x step, ... (one step per reading) instead of the
   * monotonic clock, so the soft deadline trips after a known number of folders on a fast machine and
   * a slow one alike (a step of 0 never trips it). A number, not a function, because the request
   * crosses into a worker thread.
   */
  clockStepMs?: number;
  /**
   * Record only the files of folders whose key is at least this many bytes long; shallower folders
   * are walked for their subfolders alone (no file in them is measured or counted). Absent: every
   * folder's files. Lets a caller whose listing stops at a depth (git cannot open a folder whose
   * path is too long for one system call) walk just what lies beyond it.
   */
  minFolderKeyBytes?: number;
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
  /** Files met and left out because they are in `skipFiles` (lets a caller check a guessed skip list). */
  skippedFiles: PathKey[];
  durationMs: number;
}

const SLASH = Buffer.from('/');
const NON_ASCII = /[\u0080-\uffff]/;
const REPLACEMENT = '\ufffd';

/** One folder entry: its key (name bytes as latin1), its name as text when the bytes are valid UTF-8, its type. */
interface Entry {
  key: PathKey;
  text: string | null;
  dirent: fs.Dirent<string> | fs.Dirent<Buffer>;
}

const byKey = (a: Entry, b: Entry): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * A folder's entries in byte order of their names. Names are read as text (no Buffer per name, and
 * fs calls take string paths); a folder holding a name that is not valid UTF-8 (decoded with U+FFFD)
 * is read again as bytes, so every name still round-trips exactly.
 */
function readFolder(abs: string | Buffer): Entry[] {
  const out: Entry[] = [];
  if (typeof abs === 'string') {
    const named = fs.readdirSync(abs, { withFileTypes: true });
    let lossless = true;
    for (const d of named) {
      if (d.name.includes(REPLACEMENT)) {
        lossless = false;
        break;
      }
      out.push({
        key: !NON_ASCII.test(d.name) ? d.name : Buffer.from(d.name, 'utf8').toString('latin1'),
        text: d.name,
        dirent: d,
      });
    }
    if (lossless) return out.sort(byKey);
    out.length = 0;
  }
  for (const d of fs.readdirSync(abs, { withFileTypes: true, encoding: 'buffer' }))
    out.push({ key: d.name.toString('latin1'), text: null, dirent: d });
  return out.sort(byKey);
}

/** Grows a Float64Array-backed column without a boxed number[] in between. */
class Column {
  data: Float64Array;
  length = 0;
  constructor() {
    this.data = new Float64Array(1024);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  take(): Float64Array {
    return this.data.slice(0, this.length);
  }
}

/** The walk's clock: the monotonic clock, or a fixed-step one for a deterministic deadline. */
function walkClock(stepMs: number | undefined): () => number {
  if (stepMs === undefined) return () => performance.now();
  let readings = 0;
  return () => readings++ * stepMs;
}

export function scanTree(req: ScanRequest): ScanTable {
  const t0 = performance.now();
  const now = walkClock(req.clockStepMs);
  const deadline = now() + req.timeoutMs;
  const prune = new Set(req.pruneDirs);
  const skip = new Set(req.skipFiles);
  const fsRules = req.mode === 'filesystem' ? createFsIgnore(req.gitignoreText) : null;
  const rootBuf = Buffer.from(req.root);

  const paths: PathKey[] = [];
  const size = new Column();
  const mtimeMs = new Column();
  const ctimeMs = new Column();
  const ino = new Column();
  const mode: number[] = [];
  const nestedRepos: PathKey[] = [];
  const prunedDirs: PathKey[] = [];
  const listedDirs: PathKey[] = [];
  const seenDirs: PathKey[] = [];
  const skippedFiles: PathKey[] = [];
  let truncated: ScanTable['truncated'] = null;

  // Stack of folders to enter (key, absolute path as text when it has one, start or not).
  const stackRel: PathKey[] = [];
  const stackAbs: (string | null)[] = [];
  const stackStart: boolean[] = [];
  for (let i = req.starts.length - 1; i >= 0; i--) {
    const rel = req.starts[i]!;
    const text = Buffer.from(rel, 'latin1').toString('utf8');
    stackRel.push(rel);
    // A start whose bytes are not valid UTF-8 is reached by bytes (its text would not round-trip).
    stackAbs.push(text.includes(REPLACEMENT) ? null : rel === '' ? req.root : `${req.root}/${text}`);
    stackStart.push(true);
    seenDirs.push(rel);
  }

  walk: while (stackRel.length > 0) {
    if (now() > deadline) {
      truncated = 'scan_time';
      break;
    }
    const rel = stackRel.pop()!;
    const absText = stackAbs.pop()!;
    const isStart = stackStart.pop()!;
    const abs: string | Buffer =
      absText ?? (rel === '' ? rootBuf : Buffer.concat([rootBuf, SLASH, Buffer.from(rel, 'latin1')]));
    // A folder whose path is too long for one call is opened a folder at a time and listed, and
    // its files measured, through its descriptor: such files are recorded like any other.
    let heldFd: number | null = null;
    let here: string | Buffer = abs;
    let entries: Entry[];
    try {
      if (isLongPath(abs)) {
        heldFd = openLongFolder(abs);
        here = `/proc/self/fd/${heldFd}`;
      }
      entries = readFolder(here);
    } catch {
      if (heldFd !== null) fs.closeSync(heldFd);
      continue; // vanished or unreadable folder: nothing recorded, not "listed"
    }
    const subdirs: number[] = [];
    const recordHere = req.minFolderKeyBytes === undefined || rel.length >= req.minFolderKeyBytes;
    try {
      if (req.mode === 'git' && !isStart && entries.some((e) => e.key === '.git')) {
        nestedRepos.push(rel);
        continue;
      }
      for (let k = 0; k < entries.length; k++) {
        const e = entries[k]!;
        const name = e.key;
        if (req.mode === 'git' && name === '.git') continue;
        const key = rel === '' ? name : `${rel}/${name}`;
        const d = e.dirent;
        if (d.isDirectory()) {
          seenDirs.push(key);
          if (prune.has(key) || (fsRules !== null && fsRules.ignoresDir(key, name))) prunedDirs.push(key);
          else subdirs.push(k);
          continue;
        }
        if (!recordHere) continue;
        const link = d.isSymbolicLink();
        if (!link && !d.isFile()) continue; // fifo, socket, device: not content
        if (skip.has(key)) {
          skippedFiles.push(key);
          continue;
        }
        if (isSqliteSidecar(name) || isWatchCookie(name) || (fsRules !== null && fsRules.ignoresFile(key, name)))
          continue;
        if (paths.length >= req.maxFiles) {
          truncated = 'scan_files';
          break walk;
        }
        let st: fs.Stats | undefined;
        try {
          st =
            typeof here === 'string' && e.text !== null
              ? fs.lstatSync(`${here}/${e.text}`)
              : fs.lstatSync(
                  Buffer.concat([
                    typeof here === 'string' ? Buffer.from(here) : here,
                    SLASH,
                    Buffer.from(name, 'latin1'),
                  ]),
                );
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
      if (recordHere) listedDirs.push(rel);
    } finally {
      if (heldFd !== null) fs.closeSync(heldFd);
    }
    for (let i = subdirs.length - 1; i >= 0; i--) {
      const e = entries[subdirs[i]!]!;
      stackRel.push(rel === '' ? e.key : `${rel}/${e.key}`);
      stackAbs.push(absText !== null && e.text !== null ? `${absText}/${e.text}` : null);
      stackStart.push(false);
    }
  }

  return {
    paths,
    size: size.take(),
    mtimeMs: mtimeMs.take(),
    ctimeMs: ctimeMs.take(),
    ino: ino.take(),
    mode: Uint8Array.from(mode),
    nestedRepos,
    prunedDirs,
    truncated,
    listedDirs,
    seenDirs,
    skippedFiles,
    durationMs: performance.now() - t0,
  };
}
