import { createHash } from 'node:crypto';
import { keyToBytes, type PathKey } from '../paths/index.ts';
import { runGit, type GitConfigPair } from './runner.ts';
import type { Scratch } from './scratch-repo.ts';

/**
 * Encodes contents and trees as a `git fast-import` stream and feeds it to a scratch repository:
 * fast-import runs no hook, filter or driver, and writes one pack.
 */

/** git's blob id (SHA-1) of some content. */
export function gitBlobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

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

/** Builds a `git fast-import` stream: deduplicated blobs, then commits that list tree entries. */
export class ImportStream {
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

export async function importStream(s: Scratch, stream: Buffer, timeoutMs: number, gitBinary?: string): Promise<void> {
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
