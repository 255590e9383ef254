import { MAX_JSON_DEPTH } from '../../shared/index.ts';

/**
 * A hook payload over the body limit is never parsed, but what it refers to must still be closed
 * (else a tool call's checkpoint keeps the workspace busy, or a run stays open). What is read of
 * it: its scalar fields (strings up to `OVERSIZE_FIELD_CHARS`, numbers, booleans, null) at the top
 * level and at the nested paths the agent names (where it puts its ids: opencode's `input.callID`,
 * Hermes's `extra.tool_call_id`), by a scanner the body's bytes stream through as they arrive. The
 * scanner keeps no more than the path it is at (bounded by `MAX_JSON_DEPTH`) and the one value it
 * is reading (bounded): the tool's input and answer pass through it unread, whatever their size
 * and wherever the ids lie around them (Claude Code sends `tool_use_id` after `tool_response`,
 * Hermes its `extra` after `tool_input`). It is exact for a JSON object: a field is taken only
 * when its key and its whole value were read at that path, a later duplicate key replaces an
 * earlier one as a JSON parser does, and the scan stops at the first byte it cannot place (or where
 * the body was cut off), keeping what it had read whole until then.
 */

/** The longest string value taken as a field (an identifier or a path, never content), in characters. */
export const OVERSIZE_FIELD_CHARS = 4096;
/**
 * The most bytes of an over-limit payload read at all: one announced as longer is not read and its
 * tool call is left to close with its run.
 */
export const OVERSIZE_READ_BYTES = 64 * 1024 * 1024;
/** The most top-level fields taken (an agent's payload has a few dozen; the rest is not kept). */
export const OVERSIZE_MAX_FIELDS = 256;

/** A scalar read from an over-limit payload. */
export type OversizeScalar = string | number | boolean | null;
/** The fields read from an over-limit payload: its top-level scalars and the named nested ones. */
export interface OversizeFields {
  [key: string]: OversizeScalar | OversizeFields;
}

/** The most bytes of one string token kept while reading it (a field's characters, escaped). */
const MAX_TOKEN_BYTES = OVERSIZE_FIELD_CHARS * 6 + 2;
/** The longest number or literal token read (`true`, `-1.5e10`); longer ones are not taken. */
const MAX_SCALAR_BYTES = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** How many backslashes stand right before `at`, counting back no further than `from`. */
function backslashesBefore(chunk: Buffer, at: number, from: number): number {
  let n = 0;
  while (at - 1 - n >= from && chunk[at - 1 - n] === BACKSLASH) n++;
  return n;
}
const isSpace = (b: number) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
const isScalarByte = (b: number) =>
  (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x7a) || b === 0x2d || b === 0x2b || b === 0x2e || b === 0x45;

/** One open object or array: its node when its fields are taken, and the key being read in it. */
interface Frame {
  array: boolean;
  /** The object fields go to, or null when nothing in this container is taken. */
  node: OversizeFields | null;
  /** The dotted path of this container ('' at the top level). */
  path: string;
  key: string | null;
}

type Mode = 'start' | 'key' | 'colon' | 'value' | 'after' | 'string' | 'scalar' | 'end' | 'stopped';

const newNode = () => Object.create(null) as OversizeFields;

/**
 * A scanner for an over-limit payload: `push` each chunk of the body in order, `fields` at any time
 * gives what was read whole so far. `paths`: the nested fields to take besides the top-level ones,
 * dotted (`input.callID`).
 */
export function createOversizeScanner(paths: readonly string[] = []) {
  const wanted = new Set(paths);
  const prefixes = new Set<string>();
  for (const p of paths) {
    const parts = p.split('.');
    for (let i = 1; i < parts.length; i++) prefixes.add(parts.slice(0, i).join('.'));
  }
  const root = newNode();
  let topFields = 0;
  const stack: Frame[] = [];
  let mode: Mode = 'start';
  let isKey = false;
  let escaped = false;
  let token: Buffer[] = [];
  let tokenBytes = 0;
  /** Where the value being read goes (its frame's node and key), or null when it is not taken. */
  let target: { node: OversizeFields; key: string } | null = null;

  const top = () => stack[stack.length - 1];
  const childPath = (f: Frame, key: string) => (f.path === '' ? key : `${f.path}.${key}`);

  /** Where a value under `key` of the current object goes, if anywhere. */
  function targetOf(key: string): { node: OversizeFields; key: string } | null {
    const f = top();
    if (!f || f.array || f.node === null) return null;
    const p = childPath(f, key);
    if (f.path !== '' && !wanted.has(p) && !prefixes.has(p)) return null;
    if (f.path === '' && !Object.hasOwn(f.node, key)) {
      if (topFields >= OVERSIZE_MAX_FIELDS) return null;
      topFields++;
    }
    return { node: f.node, key };
  }

  function open(array: boolean): void {
    if (stack.length >= MAX_JSON_DEPTH) {
      mode = 'stopped';
      return;
    }
    const parent = top();
    let node: OversizeFields | null = null;
    let p = '';
    if (!parent) node = root;
    else if (!array && target !== null && parent.key !== null) {
      p = childPath(parent, parent.key);
      if (prefixes.has(p)) {
        // A later duplicate key replaces the earlier value, as a JSON parser keeps the last.
        node = newNode();
        target.node[target.key] = node;
      }
    }
    if (target !== null && node === null) delete target.node[target.key];
    target = null;
    stack.push({ array, node, path: p, key: null });
    mode = array ? 'value' : 'key';
  }

  function close(array: boolean): void {
    const f = stack.pop();
    if (!f || f.array !== array) {
      mode = 'stopped';
      return;
    }
    mode = stack.length === 0 ? 'end' : 'after';
  }

  function finishToken(): void {
    // A token no field is taken from is not kept, so not parsed either.
    const over = (!isKey && target === null) || tokenBytes > (mode === 'scalar' ? MAX_SCALAR_BYTES : MAX_TOKEN_BYTES);
    const text = over ? '' : Buffer.concat(token).toString('utf8');
    token = [];
    tokenBytes = 0;
    let value: unknown;
    try {
      value = over ? undefined : (JSON.parse(text) as unknown);
    } catch {
      mode = 'stopped';
      return;
    }
    if (isKey) {
      const f = top()!;
      // A key too long to read is still a key: its value is skipped, not taken under another name.
      f.key = typeof value === 'string' ? value : null;
      target = f.key === null ? null : targetOf(f.key);
      mode = 'colon';
      return;
    }
    if (target !== null) {
      const ok = typeof value === 'string' ? value.length <= OVERSIZE_FIELD_CHARS : value !== undefined;
      if (ok) target.node[target.key] = value as OversizeScalar;
      else delete target.node[target.key];
    }
    target = null;
    mode = 'after';
  }

  function keepByte(chunk: Buffer, from: number, to: number): void {
    const limit = mode === 'scalar' ? MAX_SCALAR_BYTES : MAX_TOKEN_BYTES;
    if ((isKey || target !== null) && tokenBytes <= limit) token.push(chunk.subarray(from, to));
    tokenBytes += to - from;
  }

  function push(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length && mode !== 'stopped' && mode !== 'end') {
      if (mode === 'string') {
        // Only an unescaped quote ends a string: the bytes between are skipped natively.
        if (escaped) {
          escaped = false;
          keepByte(chunk, i, i + 1);
          i++;
          continue;
        }
        let q = chunk.indexOf(QUOTE, i);
        while (q >= 0 && backslashesBefore(chunk, q, i) % 2 === 1) q = chunk.indexOf(QUOTE, q + 1);
        if (q < 0) {
          escaped = backslashesBefore(chunk, chunk.length, i) % 2 === 1;
          keepByte(chunk, i, chunk.length);
          return;
        }
        keepByte(chunk, i, q + 1);
        i = q + 1;
        finishToken();
        continue;
      }
      if (mode === 'scalar') {
        let j = i;
        while (j < chunk.length && isScalarByte(chunk[j]!)) j++;
        keepByte(chunk, i, j);
        if (j === chunk.length) return;
        i = j;
        finishToken();
        continue;
      }
      const b = chunk[i]!;
      if (isSpace(b)) {
        i++;
        continue;
      }
      const c = String.fromCharCode(b);
      switch (mode) {
        case 'start':
          if (c === '{') open(false);
          else mode = 'stopped';
          break;
        case 'key':
          if (c === '"') {
            mode = 'string';
            isKey = true;
            keepByte(chunk, i, i + 1);
          } else if (c === '}') close(false);
          else mode = 'stopped';
          break;
        case 'colon':
          mode = c === ':' ? 'value' : 'stopped';
          break;
        case 'value':
          if (c === '{' || c === '[') open(c === '[');
          else if (c === ']' && top()?.array) close(true);
          else if (c === '"') {
            mode = 'string';
            isKey = false;
            keepByte(chunk, i, i + 1);
          } else if (isScalarByte(b)) {
            mode = 'scalar';
            isKey = false;
            continue;
          } else mode = 'stopped';
          break;
        case 'after': {
          const f = top()!;
          if (c === ',') mode = f.array ? 'value' : 'key';
          else if (c === '}' || c === ']') close(c === ']');
          else mode = 'stopped';
          break;
        }
      }
      i++;
    }
  }

  return {
    push,
    /** What was read whole so far. */
    fields: (): OversizeFields => root,
  };
}

/** The fields of a whole body (or the start of one) in one call. */
export function oversizeFields(body: Buffer | string, paths: readonly string[] = []): OversizeFields {
  const scanner = createOversizeScanner(paths);
  scanner.push(Buffer.isBuffer(body) ? body : Buffer.from(body));
  return scanner.fields();
}
