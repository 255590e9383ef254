import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../../errors.ts';

/**
 * Settings files edited in place: read as text, parsed, changed, and written back in the file's own
 * style (its indentation and final newline; JSON keeps key order), so removing what was added gives
 * back the same bytes. A file that does not parse is refused and left untouched.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const readText = (file: string): string | null => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
};

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

/** Writes through a temporary file and a rename, keeping the old file's mode. */
export function writeText(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let mode = 0o644;
  try {
    mode = fs.statSync(file).mode & 0o777;
  } catch {
    // a new file
  }
  const tmp = `${file}.rundiff-${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode });
  fs.renameSync(tmp, file);
}
