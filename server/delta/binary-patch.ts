import { deflateSync } from 'node:zlib';

/**
 * The body of a git binary patch (`git diff --binary`): `GIT binary patch`, then the new content
 * as a `literal` block and the old content as another (so the patch also applies in reverse). Each
 * block is the zlib-deflated bytes in git's base85, one line per 52 bytes of deflated data, the
 * line's first character its byte count (`A`-`Z` 1-26, `a`-`z` 27-52); a blank line ends a block.
 * `git apply` needs the full object ids on the stanza's `index` line to take it.
 */

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~';
/** Deflated bytes per line. */
const LINE_BYTES = 52;

/** git's base85 of `bytes` (a multiple of 4 is read; the tail is padded with zeros). */
function base85(bytes: Buffer): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 4) {
    let word = 0;
    for (let j = 0; j < 4; j++) word = word * 256 + (bytes[i + j] ?? 0);
    const chars = new Array<string>(5);
    for (let k = 4; k >= 0; k--) {
      chars[k] = ALPHABET[word % 85]!;
      word = Math.floor(word / 85);
    }
    out += chars.join('');
  }
  return out;
}

function lengthChar(n: number): string {
  return n <= 26 ? String.fromCharCode(0x41 + n - 1) : String.fromCharCode(0x61 + n - 27);
}

function literal(content: Buffer): string {
  const deflated = deflateSync(content);
  let out = `literal ${content.length}\n`;
  for (let at = 0; at < deflated.length; at += LINE_BYTES) {
    const line = deflated.subarray(at, at + LINE_BYTES);
    out += lengthChar(line.length) + base85(line) + '\n';
  }
  return out + '\n';
}

/** `GIT binary patch` with the forward (after) and reverse (before) blocks; an absent side is empty. */
export function binaryPatchBody(before: Buffer | null, after: Buffer | null): Buffer {
  const empty = Buffer.alloc(0);
  return Buffer.from(`GIT binary patch\n${literal(after ?? empty)}${literal(before ?? empty)}`, 'latin1');
}
