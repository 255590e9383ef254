import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../../errors.ts';
import { keyFromText, keyToBytes, type PathKey } from '../../paths/index.ts';

/**
 * A path argument never leaves the repository: it is normalised against the work tree's top level,
 * refused when it climbs out, points into `.git`, or resolves (through a symlink anywhere on the way)
 * outside the top level, and reaches git only as a `:(literal)` pathspec after `--`.
 */

function refuse(input: string, why: string): AppError {
  return new AppError('invalid_input', `path ${JSON.stringify(input)} ${why}`, {
    hint: 'Give a path inside the repository, relative to its top level.',
    details: { path: input },
  });
}

function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The real path of `abs`, or of its closest existing ancestor with the rest appended. */
function realpathOfExisting(abs: string): string {
  let cur = abs;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(cur), ...rest.reverse());
    } catch {
      const parent = path.dirname(cur);
      if (parent === cur) return abs;
      rest.push(path.basename(cur));
      cur = parent;
    }
  }
}

/** A path argument as a path key relative to `top` (`''` = the whole repository). */
export function resolveToolPath(top: string, input: string): PathKey {
  if (input.includes('\0')) throw refuse(input.replace(/\0/g, '\\0'), 'contains a NUL byte');
  const trimmed = input === '' ? '' : input;
  if (trimmed === '') throw refuse(input, 'is empty');
  const abs = path.resolve(top, trimmed);
  const rel = path.relative(top, abs);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw refuse(input, 'leaves the repository');
  const segments = rel === '' ? [] : rel.split(path.sep);
  if (segments.includes('.git')) throw refuse(input, 'points into .git');
  const realTop = realpathOfExisting(top);
  const real = realpathOfExisting(abs);
  if (!isInside(realTop, real)) throw refuse(input, 'resolves outside the repository (through a symlink)');
  return keyFromText(segments.join('/'));
}

/** `:(literal)<path>` as text for an argument list (path keys from text are valid UTF-8). */
export function literalPathspec(key: PathKey): string {
  return ':(literal)' + keyToBytes(key).toString('utf8');
}

/** `:(exclude,literal)<path>`: leaves one path out of a command's pathspec. */
export function excludePathspec(key: PathKey): string {
  return ':(exclude,literal)' + keyToBytes(key).toString('utf8');
}

/** Pathspec arguments after `--` for an optional path key (`''` = none). */
export function pathspecArgs(key: PathKey | null): string[] {
  return key === null || key === '' ? [] : [literalPathspec(key)];
}

/** True when `key` is `dir` or lies below it (`''` = everything). */
export function keyIsUnder(dir: PathKey, key: PathKey): boolean {
  return dir === '' || key === dir || key.startsWith(dir + '/');
}
