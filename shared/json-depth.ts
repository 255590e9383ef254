/**
 * Deepest nesting of arrays and objects accepted in a JSON text a client sends (a request body,
 * or JSON an agent hands inside one of its strings). Real agent payloads nest about 10 deep; a
 * 10 KB body can nest 5,000 deep, and every walk over the parsed value (validation, escaping,
 * `JSON.stringify` when it is stored) would then overflow the stack. Refused before parsing.
 */
export const MAX_JSON_DEPTH = 256;

const OPEN_ARRAY = 0x5b; // [
const OPEN_OBJECT = 0x7b; // {
const CLOSE_ARRAY = 0x5d; // ]
const CLOSE_OBJECT = 0x7d; // }
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * The nesting depth of a JSON text, counted without parsing it and stopping as soon as it passes
 * `max` (then `max + 1`). Works on UTF-8 bytes and on strings alike: the bracket, quote and
 * backslash characters are ASCII, and no byte of a multi-byte UTF-8 sequence is. Brackets inside
 * strings do not count; the text need not be valid JSON (the parser judges that afterwards).
 */
export function jsonDepth(text: string | Uint8Array, max = MAX_JSON_DEPTH): number {
  const code = typeof text === 'string' ? (i: number) => text.charCodeAt(i) : (i: number) => text[i]!;
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = code(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > max) return deepest;
      }
    } else if ((c === CLOSE_ARRAY || c === CLOSE_OBJECT) && depth > 0) depth--;
  }
  return deepest;
}
