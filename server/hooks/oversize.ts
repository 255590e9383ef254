/**
 * A hook payload over the body limit is never parsed, but the tool call it refers to must still be
 * closed (else its checkpoint keeps the workspace busy). What is read of it: the top-level fields
 * whose value is a short string, from its first `OVERSIZE_HEAD_BYTES` (read forwards) and its last
 * `OVERSIZE_TAIL_BYTES` (read backwards from the closing brace). Both reads are exact for a JSON
 * object: a field is taken only when its key and its whole value lie inside the bytes kept, and the
 * scan stops at the first thing it cannot place, so nothing in between (the tool's input or answer)
 * is ever read as a field. Claude Code, for one, sends `session_id`, `cwd`, `hook_event_name` and
 * `tool_name` before `tool_input` and `tool_use_id` after `tool_response`.
 */

/** The bytes kept from the start of an over-limit payload. */
export const OVERSIZE_HEAD_BYTES = 256 * 1024;
/** The bytes kept from the end of an over-limit payload. */
export const OVERSIZE_TAIL_BYTES = 256 * 1024;
/** The longest string value taken as a field (an identifier or a path, never content). */
export const OVERSIZE_FIELD_CHARS = 4096;
/**
 * The most bytes of an over-limit payload read at all: one announced as longer is not read and its
 * tool call is left to close with its run.
 */
export const OVERSIZE_READ_BYTES = 64 * 1024 * 1024;

const WS = new Set([' ', '\t', '\n', '\r']);

/** The index after the string token starting at `s[i] === '"'`, or -1 when it does not end in `s`. */
function stringEnd(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j];
    if (c === '\\') j++;
    else if (c === '"') return j + 1;
  }
  return -1;
}

/** The index after the object or array starting at `s[i]`, or -1 when it does not end in `s`. */
function nestedEnd(s: string, i: number): number {
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    const c = s[j];
    if (c === '"') {
      const e = stringEnd(s, j);
      if (e < 0) return -1;
      j = e - 1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return -1;
}

function parsedString(token: string): string | null {
  try {
    const v: unknown = JSON.parse(token);
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}

/** Records one field; `first`: a key already recorded keeps its value (the backward read meets the last first). */
function keep(out: Record<string, string>, keyToken: string, valueToken: string, first = false): void {
  const key = parsedString(keyToken);
  const value = parsedString(valueToken);
  if (key === null || value === null || value.length > OVERSIZE_FIELD_CHARS) return;
  if (first && Object.hasOwn(out, key)) return;
  out[key] = value;
}

/** The top-level string fields of the start of a JSON object, read forwards. */
export function headFields(head: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  let i = 0;
  const skip = () => {
    while (i < head.length && WS.has(head[i]!)) i++;
  };
  skip();
  if (head[i] !== '{') return out;
  i++;
  for (;;) {
    skip();
    if (head[i] !== '"') return out;
    const keyEnd = stringEnd(head, i);
    if (keyEnd < 0) return out;
    const keyToken = head.slice(i, keyEnd);
    i = keyEnd;
    skip();
    if (head[i] !== ':') return out;
    i++;
    skip();
    const c = head[i];
    if (c === undefined) return out;
    if (c === '"') {
      const e = stringEnd(head, i);
      if (e < 0) return out;
      keep(out, keyToken, head.slice(i, e));
      i = e;
    } else if (c === '{' || c === '[') {
      const e = nestedEnd(head, i);
      if (e < 0) return out;
      i = e;
    } else {
      while (i < head.length && !WS.has(head[i]!) && head[i] !== ',' && head[i] !== '}') i++;
    }
    skip();
    if (head[i] !== ',') return out;
    i++;
  }
}

/** The index of the quote opening the string token that ends with the quote at `s[end]`, or -1. */
function stringStart(s: string, end: number): number {
  for (let j = end - 1; j >= 0; j--) {
    if (s[j] !== '"') continue;
    let slashes = 0;
    while (j - 1 - slashes >= 0 && s[j - 1 - slashes] === '\\') slashes++;
    // An unescaped quote cannot be inside a string: the first one met is the opening quote.
    if (slashes % 2 === 0) return j;
  }
  return -1;
}

/**
 * The top-level string fields at the end of a JSON object, read backwards from its closing brace
 * while the values are scalars (the first object or array value ends the read).
 */
export function tailFields(tail: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  let j = tail.length - 1;
  const skip = () => {
    while (j >= 0 && WS.has(tail[j]!)) j--;
  };
  skip();
  if (tail[j] !== '}') return out;
  j--;
  for (;;) {
    skip();
    if (j < 0) return out;
    const c = tail[j]!;
    let valueToken: string | null = null;
    if (c === '"') {
      const start = stringStart(tail, j);
      if (start < 0) return out;
      valueToken = tail.slice(start, j + 1);
      j = start - 1;
    } else if (c === '}' || c === ']' || c === '{' || c === ',' || c === ':') {
      return out;
    } else {
      while (j >= 0 && !WS.has(tail[j]!) && tail[j] !== ':' && tail[j] !== ',') j--;
    }
    skip();
    if (tail[j] !== ':') return out;
    j--;
    skip();
    if (tail[j] !== '"') return out;
    const keyStart = stringStart(tail, j);
    if (keyStart < 0) return out;
    const keyToken = tail.slice(keyStart, j + 1);
    j = keyStart - 1;
    // The field is whole only when what precedes its key is a comma or the object's opening brace.
    skip();
    if (j < 0 || (tail[j] !== ',' && tail[j] !== '{')) return out;
    if (valueToken !== null) keep(out, keyToken, valueToken, true);
    if (tail[j] === '{') return out;
    j--;
  }
}

/**
 * The identifying fields of an over-limit payload from its kept start and end. `whole` is false
 * when the end was not reached (only the start is read then). A field in both keeps the end's
 * value, as a JSON parser keeps the last of duplicate keys.
 */
export function oversizeFields(head: Buffer, tail: Buffer, whole: boolean): Record<string, string> {
  const fromHead = headFields(head.toString('utf8'));
  if (!whole) return fromHead;
  return { ...fromHead, ...tailFields(tail.toString('utf8')) };
}
