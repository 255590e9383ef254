import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGit } from './runner.ts';
import { NO_ATTRIBUTES } from './scratch-repo.ts';

/**
 * A three-way merge of three contents with `git merge-file`, on plain files in a private temp
 * folder outside any repository: no workspace config, attribute or merge driver can apply (and
 * `merge-file` uses none), and the runner's hardening holds as for every git call.
 */

export interface MergeResult {
  /** true: no conflict; `merged` is the result. */
  clean: boolean;
  /** The merge; with conflicts, git's conflict markers around each conflicting part. */
  merged: Buffer;
  conflicts: number;
}

export interface MergeLabels {
  current: string;
  base: string;
  other: string;
}

/** Prefix of the temp folders (a test can see none is left behind). */
export const MERGE_PREFIX = 'rundiff-merge-';

/** Folds the change from `base` to `other` into `current`. */
export async function mergeFile(
  sides: { base: Buffer; current: Buffer; other: Buffer },
  labels: MergeLabels,
  timeoutMs = 10_000,
): Promise<MergeResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), MERGE_PREFIX));
  try {
    await Promise.all([
      writeFile(path.join(dir, 'current'), sides.current, { mode: 0o600 }),
      writeFile(path.join(dir, 'base'), sides.base, { mode: 0o600 }),
      writeFile(path.join(dir, 'other'), sides.other, { mode: 0o600 }),
    ]);
    // merge-file exits with the number of conflicts (capped at 127); a negative (255) is an error.
    const r = await runGit({
      cwd: dir,
      args: [
        'merge-file',
        '-p',
        '-L',
        labels.current,
        '-L',
        labels.base,
        '-L',
        labels.other,
        'current',
        'base',
        'other',
      ],
      okExitCodes: Array.from({ length: 128 }, (_, i) => i),
      config: NO_ATTRIBUTES,
      timeoutMs,
    });
    return { clean: r.exitCode === 0, merged: r.stdout, conflicts: r.exitCode };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
