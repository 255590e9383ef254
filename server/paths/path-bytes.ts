/**
 * File names are bytes. Inside the server a path is a "path key": a string holding one char per
 * byte (latin1), so any name (newlines, invalid UTF-8) round-trips, compares in byte order, and
 * converts back to a Buffer for fs calls. It becomes UTF-8 text only at the edge (`displayPath`).
 */

export type PathKey = string;

export function keyFromBytes(bytes: Buffer): PathKey {
  return bytes.toString('latin1');
}

export function keyFromText(text: string): PathKey {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/**
 * The key of a path as rows show it (`path`, and `path_base64` holding the raw bytes when the name
 * is not valid UTF-8): the inverse of `displayPath`.
 */
export function keyFromShown(path: string, base64: string | null | undefined): PathKey {
  return base64 ? keyFromBytes(Buffer.from(base64, 'base64')) : keyFromText(path);
}

export function keyToBytes(key: PathKey): Buffer {
  return Buffer.from(key, 'latin1');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export interface DisplayPath {
  /** UTF-8 text; invalid bytes shown as U+FFFD. */
  path: string;
  /** Only when the name is not valid UTF-8: its raw bytes, base64. */
  base64?: string;
}

export function displayPath(key: PathKey): DisplayPath {
  const bytes = keyToBytes(key);
  try {
    return { path: utf8.decode(bytes) };
  } catch {
    return { path: bytes.toString('utf8'), base64: bytes.toString('base64') };
  }
}

/** Byte-order comparison of two path keys (the contract's "path order", docs/contract.md). */
export function comparePathKeys(a: PathKey, b: PathKey): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Joins a relative path key onto a folder path key with `/`. */
export function joinKey(dir: PathKey, name: PathKey): PathKey {
  return dir === '' ? name : `${dir}/${name}`;
}

/** Splits NUL-terminated (or NUL-separated) output into its non-empty byte records. */
export function splitNul(buf: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (;;) {
    const i = buf.indexOf(0, start);
    if (i === -1) {
      if (start < buf.length) parts.push(buf.subarray(start));
      return parts;
    }
    if (i > start) parts.push(buf.subarray(start, i));
    start = i + 1;
  }
}

/** Quotes a path as git does in patch headers when it holds special bytes (core.quotePath=false: only controls, `"` and `\\`). */
export function gitQuotePath(key: PathKey): string {
  const bytes = keyToBytes(key);
  let needs = false;
  for (const b of bytes) {
    if (b < 0x20 || b === 0x22 || b === 0x5c || b === 0x7f) {
      needs = true;
      break;
    }
  }
  const text = displayPath(key);
  if (!needs && text.base64 === undefined) return text.path;
  let out = '"';
  const escapes: Record<number, string> = {
    7: '\\a',
    8: '\\b',
    9: '\\t',
    10: '\\n',
    11: '\\v',
    12: '\\f',
    13: '\\r',
    0x22: '\\"',
    0x5c: '\\\\',
  };
  let run: number[] = [];
  const flush = () => {
    if (run.length) out += Buffer.from(run).toString('utf8');
    run = [];
  };
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    const esc = escapes[b];
    if (esc !== undefined) {
      flush();
      out += esc;
    } else if (b < 0x20 || b === 0x7f || (text.base64 !== undefined && b >= 0x80)) {
      flush();
      out += '\\' + b.toString(8).padStart(3, '0');
    } else {
      run.push(b);
    }
  }
  flush();
  return out + '"';
}
