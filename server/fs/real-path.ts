import fs from 'node:fs';
import path from 'node:path';

/**
 * A folder's real path (links resolved), or the path made absolute when it cannot be resolved (it
 * does not exist, or a parent cannot be read): for comparing where folders are, never for reading.
 */
export function realOrResolved(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
