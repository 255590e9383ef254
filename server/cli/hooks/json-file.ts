import {
  applyEdits,
  format,
  modify,
  parse as parseWithComments,
  printParseErrorCode,
  type ParseError,
} from 'jsonc-parser';
import { AppError } from '../../errors.ts';

/**
 * Settings files edited in place: read as text, parsed, changed, and written back in the file's own
 * style (its indentation and final newline; JSON keeps key order), so removing what was added gives
 * back the same bytes. A file that does not parse is refused and left untouched. The files are read
 * and written through `hook-file.ts`.
 *
 * Where the agent reads comments in the file (`jsonc`: Gemini CLI's settings.json), the file is
 * parsed with comments and trailing commas allowed, and written by editing its text only where a
 * value changed (with jsonc-parser, the editor VS Code uses for its own settings): the person's
 * comments and layout stay, also inside a hook list rundiff adds to or removes from.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** How the agent reads a settings file: plain JSON, or JSON with comments. */
export type Syntax = 'json' | 'jsonc';

// Comments, but no trailing commas: Gemini CLI strips the comments and reads the rest as JSON.
const PARSE_OPTIONS = { allowTrailingComma: false, disallowComments: false, allowEmptyContent: false };

function withComments(file: string, text: string): unknown {
  const errors: ParseError[] = [];
  const value: unknown = parseWithComments(text, errors, PARSE_OPTIONS);
  const first = errors[0];
  if (first) {
    const line = text.slice(0, first.offset).split('\n').length;
    throw new AppError(
      'invalid_input',
      `${file} is not valid JSON with comments (${printParseErrorCode(first.error)} at line ${line}); left unchanged`,
      { hint: 'fix the file by hand, then run the command again' },
    );
  }
  return value;
}

export function parseObject(file: string, text: string, syntax: Syntax = 'json'): JsonObject {
  let value: unknown;
  if (syntax === 'jsonc') value = withComments(file, text);
  else
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new AppError('invalid_input', `${file} is not valid JSON (${(err as Error).message}); left unchanged`, {
        hint: 'fix the file by hand, then run the command again',
      });
    }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new AppError('invalid_input', `${file} does not hold a JSON object; left unchanged`);
  return value as JsonObject;
}

/** The file's indentation (default two spaces) and whether it ends with a newline (default yes). */
export function styleOf(text: string | null): { indent: string | number; newline: boolean } {
  if (text === null) return { indent: 2, newline: true };
  const m = /^[{[]\s*\n([ \t]+)\S/.exec(text);
  return { indent: m ? m[1]! : 2, newline: text.endsWith('\n') };
}

export function serialize(value: JsonObject, style: { indent: string | number; newline: boolean }): string {
  return JSON.stringify(value, null, style.indent) + (style.newline ? '\n' : '');
}

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The file's text for `next`: plain JSON is serialized in the file's style; a file with comments
 * is `before` with only the values that differ edited, so its comments and layout stay.
 */
export function rewrite(file: string, before: string | null, next: JsonObject, syntax: Syntax): string {
  const style = styleOf(before);
  if (before === null || syntax === 'json') return serialize(next, style);
  const formatting = {
    insertSpaces: typeof style.indent === 'number' || !style.indent.includes('\t'),
    tabSize: typeof style.indent === 'number' ? style.indent : style.indent.length,
    eol: before.includes('\r\n') ? '\r\n' : '\n',
  };
  let text = before;
  for (const [at, value] of edits(parseObject(file, before, 'jsonc'), next, [])) {
    if (value === undefined) {
      // A removal is formatted around where it was (a neighbouring item may be laid out again).
      text = applyEdits(text, modify(text, at, value, { formattingOptions: formatting }));
      continue;
    }
    // What is added is laid out on its own; the person's text around it keeps its bytes.
    const added = modify(text, at, value, {});
    text = applyEdits(text, added);
    const [one] = added;
    if (added.length === 1 && one)
      text = applyEdits(text, format(text, { offset: one.offset, length: one.content.length }, formatting));
  }
  return text;
}

type JsonPath = (string | number)[];
const same = (a: Json | undefined, b: Json | undefined) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The edits that turn `a` into `b`, as (path, new value or undefined to remove), applied in order.
 * Objects are compared key by key; a list that `b` only appends to, or only removes items from,
 * is edited item by item (removals from the end, so earlier indexes stay right); any other
 * change replaces the value.
 */
function edits(a: Json | undefined, b: Json | undefined, at: JsonPath): [JsonPath, Json | undefined][] {
  if (same(a, b)) return [];
  if (isObject(a) && isObject(b)) {
    const out: [JsonPath, Json | undefined][] = [];
    for (const key of Object.keys(a)) if (!(key in b)) out.push([[...at, key], undefined]);
    for (const [key, value] of Object.entries(b)) out.push(...edits(a[key], value, [...at, key]));
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (b.length > a.length && a.every((v, i) => same(v, b[i])))
      return b.slice(a.length).map((v, i) => [[...at, a.length + i], v]);
    if (b.length === a.length) return b.flatMap((v, i) => edits(a[i], v, [...at, i]));
    const kept = keptIndexes(a, b);
    if (kept) {
      const out: [JsonPath, Json | undefined][] = [];
      for (let i = a.length - 1; i >= 0; i--) if (!kept.has(i)) out.push([[...at, i], undefined]);
      return out;
    }
  }
  return [[at, b]];
}

/** When `b` is `a` with some items left out, the indexes of `a` it keeps; else null. */
function keptIndexes(a: Json[], b: Json[]): Set<number> | null {
  if (b.length >= a.length) return null;
  const kept = new Set<number>();
  let j = 0;
  for (let i = 0; i < a.length && j < b.length; i++)
    if (same(a[i], b[j])) {
      kept.add(i);
      j++;
    }
  return j === b.length ? kept : null;
}

/**
 * Refuses settings whose `hooks` rundiff would have to drop to add or remove its own: a `hooks`
 * that is not an object, or an event of `touched` whose value is not a list. Nothing is written.
 */
export function checkHooksShape(file: string, settings: JsonObject, touched: readonly string[]): void {
  const hooks = settings.hooks;
  if (hooks === undefined) return;
  if (!isObject(hooks))
    throw new AppError('invalid_input', `${file}: "hooks" is not a JSON object; left unchanged`, {
      hint: 'fix or remove the "hooks" value by hand, then run the command again',
    });
  for (const event of touched) {
    const list = hooks[event];
    if (list !== undefined && !Array.isArray(list))
      throw new AppError('invalid_input', `${file}: "hooks.${event}" is not a list; left unchanged`, {
        hint: 'fix or remove that value by hand, then run the command again',
      });
  }
}
