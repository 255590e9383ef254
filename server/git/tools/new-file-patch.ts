import { createHash } from 'node:crypto';
import { gitQuotePath, keyFromText, type PathKey } from '../../paths/index.ts';

/**
 * Pure: the stanza git would print for an untracked file shown as a new file (what `git add -N`
 * then `git diff --full-index` prints), built without touching the index. A new file needs no diff
 * algorithm: every line is an addition.
 */

/** git's object id of a blob: the hash of `blob <size>\0<bytes>` (sha1 or sha256 repositories). */
export function blobOid(content: Buffer, algo: 'sha1' | 'sha256' = 'sha1'): string {
  return createHash(algo).update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** Lines in `content` as numstat counts them (a last line without a newline counts). */
export function countLines(content: Buffer): number {
  if (content.length === 0) return 0;
  let n = 0;
  let pos = content.indexOf(10);
  while (pos !== -1) {
    n++;
    pos = content.indexOf(10, pos + 1);
  }
  return content[content.length - 1] === 10 ? n : n + 1;
}

/** git's binary sniff: a NUL in the first 8,000 bytes. */
export function looksBinary(content: Buffer): boolean {
  return content.subarray(0, 8000).includes(0);
}

/** `a/<path>` quoted as git quotes names in patch headers. */
function side(prefix: 'a/' | 'b/', path: PathKey): string {
  return gitQuotePath(keyFromText(prefix) + path);
}

export interface NewFileStanzaInput {
  path: PathKey;
  /** `100644`, `100755` or `120000`. */
  mode: string;
  oid: string;
  /** The file's bytes (for a symlink: its target); unused when `binary`. */
  content: Buffer;
  binary: boolean;
}

export function newFileStanza(input: NewFileStanzaInput): Buffer {
  const zero = '0'.repeat(input.oid.length);
  const a = side('a/', input.path);
  const b = side('b/', input.path);
  const head = `diff --git ${a} ${b}\nnew file mode ${input.mode}\nindex ${zero}..${input.oid}\n`;
  if (input.binary) return Buffer.from(`${head}Binary files /dev/null and ${b} differ\n`, 'utf8');
  if (input.content.length === 0) return Buffer.from(head, 'utf8');
  const lines = countLines(input.content);
  // git appends a TAB to a ---/+++ name that contains a space, so the name's end is unambiguous.
  const tab = input.path.includes(' ') ? '\t' : '';
  const range = lines === 1 ? '+1' : `+1,${lines}`;
  const parts: Buffer[] = [Buffer.from(`${head}--- /dev/null\n+++ ${b}${tab}\n@@ -0,0 ${range} @@\n`, 'utf8')];
  let pos = 0;
  const body = input.content;
  while (pos < body.length) {
    const nl = body.indexOf(10, pos);
    const end = nl === -1 ? body.length : nl + 1;
    parts.push(Buffer.from('+', 'latin1'), body.subarray(pos, end));
    if (nl === -1) parts.push(Buffer.from('\n\\ No newline at end of file\n', 'latin1'));
    pos = end;
  }
  return Buffer.concat(parts);
}
