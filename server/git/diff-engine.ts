import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGit, type GitConfigPair } from './runner.ts';
import { keyFromBytes, keyToBytes, type PathKey } from '../paths/index.ts';
import type {
  BatchDiff,
  FallbackDiff,
  LineDiff,
  RenameDetector,
  RenamePair,
  RenameResult,
  RenameSide,
} from '../delta/index.ts';

/**
 * git as the exact diff engine for the delta. Both sides' bytes are already in memory, so nothing
 * is read from a workspace, and git runs only in a fresh private temp folder:
 * - line diffs: the pairs are written as `x/<i>` and `y/<i>` and one `git diff --no-index` answers
 *   them all, with git's own Myers variant and heuristics (its counts are not always minimal, so
 *   only git itself reproduces `git diff --numstat`);
 * - renames: the deleted and added sides are streamed into a throw-away bare repository
 *   (`git fast-import`, which runs no hook, filter or driver) as two trees, and `git diff-tree -M`
 *   pairs them with diffcore-rename itself (exact first, 50% similarity, tie-breaks, rename limit).
 */

export interface GitDiffEngineOptions {
  /** Folder in which the private scratch repositories are created. Default: the OS temp folder. */
  tmpDir?: string;
  /** The git executable (tests point it at a missing file). */
  gitBinary?: string;
  /** Content offered to rename detection at most (bytes); beyond, only identical contents pair. Default 128 MiB. */
  maxRenameBytes?: number;
}

export interface GitDiffEngine {
  renameDetector: RenameDetector;
  batchDiff: BatchDiff;
  fallbackDiff: FallbackDiff;
}

/** Spawn and start-up allowance on top of the per-file budgets (ms): a busy machine needs it. */
const SPAWN_SLACK_MS = 1_000;
/** A user's global attributes file must not turn text binary or pick a diff driver here. */
const NO_ATTRIBUTES: readonly GitConfigPair[] = [['core.attributesFile', '/dev/null']];
/**
 * The scratch objects only need to exist until the folder is removed: no delta search, no
 * compression, one pack kept as is (not exploded into loose files), no fsync.
 */
const FAST_IMPORT_CONFIG: readonly GitConfigPair[] = [
  ['core.compression', '0'],
  ['pack.compression', '0'],
  ['fastimport.unpackLimit', '0'],
  ['core.fsync', 'none'],
];
const DEFAULT_MAX_RENAME_BYTES = 128 * 1024 * 1024;

export function createGitDiffEngine(opts: GitDiffEngineOptions = {}): GitDiffEngine {
  const tmpRoot = opts.tmpDir ?? os.tmpdir();
  const maxRenameBytes = opts.maxRenameBytes ?? DEFAULT_MAX_RENAME_BYTES;
  const batchDiff: BatchDiff = (pairs, timeoutMsPerFile) => diffPairs(pairs, timeoutMsPerFile, tmpRoot, opts.gitBinary);
  return {
    renameDetector: (deleted, added, timeoutMs) =>
      detectRenames(deleted, added, timeoutMs, tmpRoot, maxRenameBytes, opts.gitBinary),
    batchDiff,
    fallbackDiff: async (before, after, timeoutMs) => {
      const [res] = await batchDiff([{ before, after }], timeoutMs);
      return res ?? null;
    },
  };
}

/** git's blob id (SHA-1) of some content. */
export function gitBlobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

// ---------------------------------------------------------------------------------------------
// Scratch repository

interface Scratch {
  cwd: string;
  gitDir: string;
}

/** A private bare repository in a fresh temp folder, removed afterwards whatever happens. */
async function withScratchRepo<T>(
  tmpRoot: string,
  attributes: Buffer | null,
  fn: (s: Scratch) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(path.join(tmpRoot, 'rundiff-diff-'));
  try {
    const gitDir = path.join(dir, 'scratch.git');
    await mkdir(path.join(gitDir, 'objects'), { recursive: true });
    await mkdir(path.join(gitDir, 'refs', 'heads'), { recursive: true });
    await mkdir(path.join(gitDir, 'info'), { recursive: true });
    await writeFile(path.join(gitDir, 'HEAD'), 'ref: refs/heads/main\n');
    // Bare, so no work tree (and no work-tree .gitattributes) is ever consulted; attributes come
    // only from info/attributes, which we write ourselves.
    await writeFile(path.join(gitDir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = true\n');
    if (attributes) await writeFile(path.join(gitDir, 'info', 'attributes'), attributes);
    return await fn({ cwd: dir, gitDir });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Builds a `git fast-import` stream: deduplicated blobs, then commits that list tree entries. */
class ImportStream {
  private readonly chunks: Buffer[] = [];
  private readonly marks = new Map<string, string>();
  private nextMark = 1;

  blob(bytes: Buffer): string {
    const id = gitBlobId(bytes);
    const known = this.marks.get(id);
    if (known) return known;
    const mark = `:${this.nextMark++}`;
    this.marks.set(id, mark);
    this.chunks.push(Buffer.from(`blob\nmark ${mark}\ndata ${bytes.length}\n`), bytes, Buffer.from('\n'));
    return mark;
  }

  /** A root commit on `refs/heads/<branch>` holding exactly `entries`. */
  commit(branch: string, entries: ReadonlyArray<{ mode: string; dataref: string; path: PathKey }>): void {
    this.chunks.push(Buffer.from(`commit refs/heads/${branch}\ncommitter rundiff <rundiff> 0 +0000\ndata 0\n`));
    for (const e of entries) {
      this.chunks.push(Buffer.from(`M ${e.mode} ${e.dataref} `), quoteForImport(keyToBytes(e.path)), Buffer.from('\n'));
    }
    this.chunks.push(Buffer.from('\n'));
  }

  finish(): Buffer {
    this.chunks.push(Buffer.from('done\n'));
    return Buffer.concat(this.chunks);
  }
}

/** C-style quoting for fast-import paths: always quoted, every byte outside printable ASCII as octal. */
export function quoteForImport(bytes: Buffer): Buffer {
  let out = '"';
  for (const b of bytes) {
    if (b === 0x22) out += '\\"';
    else if (b === 0x5c) out += '\\\\';
    else if (b < 0x20 || b >= 0x7f) out += '\\' + b.toString(8).padStart(3, '0');
    else out += String.fromCharCode(b);
  }
  return Buffer.from(out + '"', 'latin1');
}

async function importStream(s: Scratch, stream: Buffer, timeoutMs: number, gitBinary?: string): Promise<void> {
  await runGit({
    cwd: s.cwd,
    env: { GIT_DIR: s.gitDir },
    config: FAST_IMPORT_CONFIG,
    args: ['fast-import', '--quiet', '--done', '--big-file-threshold=1'],
    input: stream,
    timeoutMs,
    gitBinary,
  });
}

// ---------------------------------------------------------------------------------------------
// Rename detection

/** A gitattributes pattern matching exactly this path (whitespace and controls match as `?`). */
export function attributePattern(pathBytes: Buffer): Buffer {
  const out: number[] = [0x2f];
  for (const b of pathBytes) {
    if (b === 0x2a || b === 0x3f || b === 0x5b || b === 0x5c) out.push(0x5c, b);
    else if (b <= 0x20 || b === 0x22 || b === 0x7f) out.push(0x3f);
    else out.push(b);
  }
  return Buffer.from(out);
}

const HEX40 = /^[0-9a-f]{40}$/;

/** The commit a gitlink side points at, from its oid or its `Subproject commit <sha>` text. */
function gitlinkTarget(side: RenameSide): string | null {
  if (side.oid && HEX40.test(side.oid)) return side.oid;
  const m = side.bytes ? /^Subproject commit ([0-9a-f]{40})/.exec(side.bytes.toString('latin1')) : null;
  return m?.[1] ?? null;
}

async function detectRenames(
  deleted: RenameSide[],
  added: RenameSide[],
  timeoutMs: number,
  tmpRoot: string,
  maxRenameBytes: number,
  gitBinary?: string,
): Promise<RenameResult> {
  if (deleted.length === 0 || added.length === 0) return { pairs: [] };
  const all = [...deleted, ...added];
  let total = 0;
  for (const s of all) total += s.bytes?.length ?? 0;
  if (total > maxRenameBytes) return { pairs: [], degraded: 'degraded' };

  // A side without bytes still pairs by identity: borrow the bytes of any side with the same blob id,
  // else stand in a unique placeholder per oid (equal oids stay equal, nothing else is similar).
  const byBlobId = new Map<string, Buffer>();
  for (const s of all) if (s.bytes && s.mode !== '160000') byBlobId.set(gitBlobId(s.bytes), s.bytes);
  let unknown = 0;
  const contentOf = (s: RenameSide): Buffer => {
    if (s.bytes) return s.bytes;
    const borrowed = s.oid ? byBlobId.get(s.oid) : undefined;
    if (borrowed) return borrowed;
    return Buffer.from(`\0rundiff: content unavailable ${s.oid ?? `#${unknown++}`}\n`);
  };

  const stream = new ImportStream();
  const entries = (sides: RenameSide[]) => {
    const out: Array<{ mode: string; dataref: string; path: PathKey }> = [];
    for (const s of sides) {
      if (s.mode === '160000') {
        const target = gitlinkTarget(s);
        if (target) out.push({ mode: s.mode, dataref: target, path: s.path });
        continue;
      }
      out.push({ mode: s.mode, dataref: stream.blob(contentOf(s)), path: s.path });
    }
    return out;
  };
  stream.commit('a', entries(deleted));
  stream.commit('b', entries(added));
  const binaries = all.filter((s) => s.binaryAttr);
  const attributes = binaries.length
    ? Buffer.concat(binaries.flatMap((s) => [attributePattern(keyToBytes(s.path)), Buffer.from(' binary\n')]))
    : null;

  const deadline = Date.now() + timeoutMs;
  try {
    return await withScratchRepo(tmpRoot, attributes, async (s) => {
      await importStream(s, stream.finish(), Math.max(1, deadline - Date.now()), gitBinary);
      const res = await runGit({
        cwd: s.cwd,
        env: { GIT_DIR: s.gitDir },
        config: NO_ATTRIBUTES,
        args: ['diff-tree', '-r', '-z', '--raw', '-M', 'refs/heads/a', 'refs/heads/b'],
        timeoutMs: Math.max(1, deadline - Date.now()),
        gitBinary,
      });
      return { pairs: parseRawRenames(res.stdout) };
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    return { pairs: [], degraded: code === 'git_timeout' ? 'git_timeout' : 'degraded' };
  }
}

/** The `R<score>` records of `git diff-tree --raw -z` output. */
export function parseRawRenames(buf: Buffer): RenamePair[] {
  const fields: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0) {
      fields.push(buf.subarray(start, i));
      start = i + 1;
    }
  }
  const pairs: RenamePair[] = [];
  for (let i = 0; i < fields.length;) {
    const meta = fields[i]!.toString('latin1');
    const status = meta.split(' ')[4] ?? '';
    if (status.startsWith('R') || status.startsWith('C')) {
      const from = fields[i + 1];
      const to = fields[i + 2];
      if (status.startsWith('R') && from && to) {
        pairs.push({ from: keyFromBytes(from), to: keyFromBytes(to), similarity: Number(status.slice(1)) });
      }
      i += 3;
    } else {
      i += 2;
    }
  }
  return pairs;
}

// ---------------------------------------------------------------------------------------------
// Line diffs

async function diffPairs(
  pairs: ReadonlyArray<{ before: Buffer; after: Buffer }>,
  timeoutMsPerFile: number,
  tmpRoot: string,
  gitBinary?: string,
): Promise<Array<LineDiff | null>> {
  if (pairs.length === 0) return [];
  const deadline = Date.now() + timeoutMsPerFile * pairs.length + SPAWN_SLACK_MS;
  let dir: string | null = null;
  try {
    dir = await mkdtemp(path.join(tmpRoot, 'rundiff-diff-'));
    // Pair i is x/i against y/i: no name needs quoting and nothing can be paired across files.
    await mkdir(path.join(dir, 'x'));
    await mkdir(path.join(dir, 'y'));
    const root = dir;
    await Promise.all(
      pairs.flatMap((p, i) => [
        writeFile(path.join(root, 'x', String(i)), p.before),
        writeFile(path.join(root, 'y', String(i)), p.after),
      ]),
    );
    const res = await runGit({
      cwd: dir,
      // Never look for a repository above the scratch folder, never read a global attributes file:
      // the comparison is of the bytes alone, as git compares two blobs.
      env: { GIT_CEILING_DIRECTORIES: path.dirname(dir) },
      config: NO_ATTRIBUTES,
      args: [
        'diff',
        '--no-index',
        '--no-renames',
        '-z',
        '--numstat',
        '-p',
        '-U3',
        '--no-ext-diff',
        '--no-textconv',
        '--',
        'x',
        'y',
      ],
      okExitCodes: [0, 1],
      timeoutMs: Math.max(1, deadline - Date.now()),
      gitBinary,
    });
    return parseNumstatPatch(res.stdout, pairs.length);
  } catch {
    return pairs.map(() => null);
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Splits `git diff --no-index -z --numstat -p x y` output: NUL-terminated numstat records (each
 * `add TAB del TAB` then NUL, `x/i`, NUL, `y/i`, because the two names differ), an empty record,
 * then one stanza per differing pair. Pairs git did not list are equal (0/0).
 */
export function parseNumstatPatch(buf: Buffer, count: number): Array<LineDiff | null> {
  const out: Array<LineDiff | null> = Array.from({ length: count }, () => ({
    additions: 0,
    deletions: 0,
    hunks: Buffer.alloc(0),
  }));
  const fields: string[] = [];
  let pos = 0;
  for (;;) {
    const nul = buf.indexOf(0, pos);
    if (nul === -1) {
      pos = buf.length;
      break;
    }
    const rec = buf.subarray(pos, nul).toString('latin1');
    pos = nul + 1;
    if (rec === '') break;
    fields.push(rec);
  }
  for (let k = 0; k < fields.length; k++) {
    const [a, d, name] = fields[k]!.split('\t');
    let index = name;
    if (name === '') {
      index = fields[k + 1];
      k += 2;
    }
    const i = Number(/^x\/(\d+)$/.exec(index ?? '')?.[1] ?? NaN);
    if (!Number.isInteger(i) || i < 0 || i >= count) continue;
    // "-" = git found the pair binary: the caller judged it text, so it has no line diff here.
    out[i] = a === '-' || d === '-' ? null : { additions: Number(a), deletions: Number(d), hunks: Buffer.alloc(0) };
  }
  const text = buf.subarray(pos).toString('latin1');
  const header = /^diff --git a\/x\/(\d+) b\/y\/\d+\n/gm;
  const starts: Array<{ at: number; index: number }> = [];
  for (let m = header.exec(text); m; m = header.exec(text)) starts.push({ at: m.index, index: Number(m[1]) });
  starts.forEach((s, k) => {
    const end = k + 1 < starts.length ? starts[k + 1]!.at : text.length;
    const stanza = text.slice(s.at, end);
    const hunkAt = stanza.indexOf('\n@@');
    const entry = out[s.index];
    if (entry && hunkAt !== -1) entry.hunks = Buffer.from(stanza.slice(hunkAt + 1), 'latin1');
  });
  return out;
}
