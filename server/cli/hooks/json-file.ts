import { AppError } from '../../errors.ts';

/**
 * Settings files edited in place: read as text, parsed, changed, and written back in the file's own
 * style (its indentation and final newline; JSON keeps key order), so removing what was added gives
 * back the same bytes. A file that does not parse is refused and left untouched. The files are read
 * and written through `hook-file.ts`.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function parseObject(file: string, text: string): JsonObject {
  let value: unknown;
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
