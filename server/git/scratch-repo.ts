import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { GitConfigPair } from './runner.ts';

/**
 * The private temp folders the diff engine runs git in: nothing there comes from a workspace, so
 * no repository config, hook, attribute or driver of the user's can apply.
 */

/** A user's global attributes file must not turn text binary or pick a diff driver here. */
export const NO_ATTRIBUTES: readonly GitConfigPair[] = [['core.attributesFile', '/dev/null']];

/** Prefix of every scratch folder (a test can see that none is left behind). */
export const SCRATCH_PREFIX = 'rundiff-diff-';

export interface Scratch {
  cwd: string;
  gitDir: string;
}

/** A private bare repository in a fresh temp folder, removed afterwards whatever happens. */
export async function withScratchRepo<T>(
  tmpRoot: string,
  attributes: Buffer | null,
  fn: (s: Scratch) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(path.join(tmpRoot, SCRATCH_PREFIX));
  try {
    const gitDir = path.join(dir, 'scratch.git');
    await mkdir(path.join(gitDir, 'objects'), { recursive: true });
    await mkdir(path.join(gitDir, 'refs', 'heads'), { recursive: true });
    await mkdir(path.join(gitDir, 'info'), { recursive: true });
    await writeFile(path.join(gitDir, 'HEAD'), 'ref: refs/heads/main\n');
    // Bare, so no work tree (and no work-tree .gitattributes) is ever consulted; attributes come
    // only from info/attributes, which we write ourselves.
    await writeFile(path.join(gitDir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = true\n');
    if (attributes) await writeFile(path.join(gitDir, 'info', 'attributes'), attributes);
    return await fn({ cwd: dir, gitDir });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
