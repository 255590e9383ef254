import fs from 'node:fs';

/** A folder opened without following a final symlink (every folder on a checked way is opened so). */
export const DIR_FLAGS =
  fs.constants.O_RDONLY |
  (fs.constants.O_DIRECTORY ?? 0) |
  (fs.constants.O_NOFOLLOW ?? 0) |
  (fs.constants.O_NOCTTY ?? 0);

/**
 * Whether `/proc/self/fd` names open descriptors (Linux): what lets a path be reached through an
 * opened folder and an opened file say where it lies.
 */
export const HAS_PROC_FD = (() => {
  try {
    return fs.statSync('/proc/self/fd').isDirectory();
  } catch {
    return false;
  }
})();

/** A real folder path as the prefix, with its trailing `/`, that paths below it start with. */
export const realPrefixOf = (real: string): Buffer => Buffer.from(real.endsWith('/') ? real : real + '/', 'utf8');
