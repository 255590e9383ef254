import type { Limits, TruncatedReason } from '../../../shared/index.ts';
import { checkIgnored, listIgnored } from '../../git/index.ts';
import type { PathKey } from '../../paths/index.ts';
import { ScanDeadlineError, type Scanner } from '../../workspace/index.ts';
import { addReason, reasonFor } from '../common/reasons.ts';
import { traced } from '../common/trace.ts';
import type { AreaState } from './listing.ts';
import { areaEnv, GIT_UNOPENED_FOLDER_BYTES } from './repository.ts';

/**
 * The files git status left out at completion because a folder on their way is too long for git
 * to open (a folder that appeared during the run: one there at the checkpoint makes the walk take
 * the workspace). git's warning is cut near 4 KB and cannot name the folder, so each such area is
 * walked below the depth git reaches, through descriptors, for the files of those folders only
 * (shallower files are git's to list). git's ignore rules stay git's: its ignored folders are not
 * entered, and every file found is put to `git check-ignore`, which applies each rule git can read
 * on the way (a `.gitignore` inside such a folder it cannot read, and neither can git status). The
 * files found are added to the area's dirty paths: compared like any file git could not vouch for.
 */

export interface UnopenedContext {
  root: string;
  limits: Readonly<Limits>;
  scanner: Scanner;
  timeoutMs: number;
  ownFiles: readonly PathKey[];
  reportFailure?: (what: string, err: unknown) => void;
}

/** Adds to each area git could not fully open the files it left out; a walk cut or failed says so in `reasons`. */
export async function addUnopenedFiles(
  areas: readonly AreaState[],
  ctx: UnopenedContext,
  reasons: TruncatedReason[],
): Promise<void> {
  for (const a of areas) {
    if (!a.unopened) continue;
    try {
      for (const p of await unopenedFiles(a, ctx, reasons)) a.dirty.add(p);
    } catch (err) {
      ctx.reportFailure?.('walk of the folders git could not open', err);
      addReason(reasons, err instanceof ScanDeadlineError ? 'scan_time' : reasonFor(err));
    }
  }
}

async function unopenedFiles(a: AreaState, ctx: UnopenedContext, reasons: TruncatedReason[]): Promise<PathKey[]> {
  const { prefix, cwd, topPrefix } = a.area;
  const git = { timeoutMs: ctx.timeoutMs, env: areaEnv(a.area) };
  const ignored = await traced('ignored listing', listIgnored(cwd, git));
  const table = await traced(
    'unopened walk',
    ctx.scanner.scan({
      root: ctx.root,
      starts: [prefix === '' ? '' : prefix.slice(0, -1)],
      pruneDirs: ignored.dirs.map((d) => prefix + d),
      skipFiles: [...ignored.files.map((f) => prefix + f), ...ctx.ownFiles],
      // git mode: `.git` is skipped and a nested repository is not entered (it is an area of its own).
      mode: 'git',
      gitignoreText: null,
      maxFiles: ctx.limits.maxScannedFiles,
      timeoutMs: ctx.limits.scanTimeoutMs,
      // git names a folder from its top level; the area's keys start at its prefix.
      minFolderKeyBytes: GIT_UNOPENED_FOLDER_BYTES - topPrefix.length + prefix.length,
    }),
  );
  if (table.truncated) addReason(reasons, table.truncated);
  const rel = table.paths.map((p) => p.slice(prefix.length));
  const excluded = await traced('check-ignore', checkIgnored(cwd, rel, git));
  return rel.filter((p) => !excluded.has(p)).map((p) => prefix + p);
}
