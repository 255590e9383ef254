import { isUtf8 } from 'node:buffer';

/**
 * Turning a stanza's bytes into the stored text: UTF-8 only, cut at the per-file cap on a line
 * boundary. A cut is always reported, never silent.
 */

export interface PatchText {
  text: string;
  /** UTF-8 size of `text`. */
  bytes: number;
  /** The stanza is incomplete: cut at the cap, or at content that is not UTF-8 text. */
  truncated: boolean;
  /** Why it was cut, when it was. */
  cut: 'file_patch' | 'not_utf8' | null;
  /**
   * git's whole stanza as bytes, when it is not UTF-8 text but fits the cap: what a patch that is
   * applied (the whole-run patch) or shown from its bytes is made of. Null otherwise.
   */
  raw: Buffer | null;
}

/** Index of the first byte of `buf` that does not start a valid UTF-8 line, or -1 when all lines are valid. */
function firstInvalidLineStart(buf: Buffer): number {
  let start = 0;
  while (start < buf.length) {
    const nl = buf.indexOf(0x0a, start);
    const end = nl === -1 ? buf.length : nl + 1;
    if (!isUtf8(buf.subarray(start, end))) return start;
    start = end;
  }
  return -1;
}

/**
 * A hunk header's function name is cut by git at 80 bytes, which can split a character. It is a
 * comment to `git apply`, so drop the broken tail rather than the hunk.
 */
function repairHunkHeaders(buf: Buffer): Buffer {
  if (isUtf8(buf)) return buf;
  const parts: Buffer[] = [];
  let start = 0;
  while (start < buf.length) {
    const nl = buf.indexOf(0x0a, start);
    const end = nl === -1 ? buf.length : nl + 1;
    let line = buf.subarray(start, end);
    if (line[0] === 0x40 && line[1] === 0x40 && !isUtf8(line)) {
      const close = line.indexOf('@@', 2);
      const keep = close === -1 ? line.length : close + 2;
      let body = line.subarray(keep, nl === -1 ? line.length : line.length - 1);
      while (body.length > 0 && !isUtf8(body)) body = body.subarray(0, body.length - 1);
      line = Buffer.concat([line.subarray(0, keep), body, nl === -1 ? Buffer.alloc(0) : Buffer.from('\n')]);
    }
    parts.push(line);
    start = end;
  }
  return Buffer.concat(parts);
}

/**
 * Cuts `buf` (valid UTF-8) to at most `max` bytes at the last line end that fits, as
 * docs/contract.md promises: a line longer than what is left (minified code) is left out whole
 * rather than cut inside and given a newline it does not have, which would show a line that is not
 * in the file. The cut is reported by the caller (`truncated`).
 */
export function cutToBytes(buf: Buffer, max: number): Buffer {
  if (buf.length <= max) return buf;
  if (max <= 0) return Buffer.alloc(0);
  return buf.subarray(0, buf.lastIndexOf(0x0a, max - 1) + 1);
}

export function toPatchText(stanza: Buffer, maxBytes: number): PatchText {
  let buf = repairHunkHeaders(stanza);
  let cut: PatchText['cut'] = null;
  let raw: Buffer | null = null;
  const invalid = firstInvalidLineStart(buf);
  if (invalid !== -1) {
    if (stanza.length <= maxBytes) raw = stanza;
    // Text that is not UTF-8 cannot be stored as patch text without corrupting it, and a corrupt
    // line would make the whole-run patch fail to apply: keep only the lines before it.
    buf = buf.subarray(0, invalid);
    cut = 'not_utf8';
  }
  if (buf.length > maxBytes) {
    buf = cutToBytes(buf, maxBytes);
    cut = 'file_patch';
  }
  return { text: buf.toString('utf8'), bytes: buf.length, truncated: cut !== null, cut, raw };
}
