import fs from 'node:fs';
import path from 'node:path';
import type { UntrackedReason, WorkspaceKind } from '../../shared/index.ts';
import { findRepo, type RepoInfo } from '../git/index.ts';
import { realOrResolved } from '../fs/index.ts';
import { pseudoFsRefusal } from './pseudo-fs.ts';
import { isInside } from '../paths/index.ts';

export type WorkspaceRefusal = Exclude<UntrackedReason, 'no_checkpoint'>;

export interface ResolvedWorkspace {
  ok: true;
  /** Real path of the folder the run named (paths are reported relative to it, B13). */
  root: string;
  kind: WorkspaceKind;
  /** The enclosing repository for a git workspace (its top level may be above `root`, B16). */
  repo: RepoInfo | null;
}

export type WorkspaceResolution = ResolvedWorkspace | { ok: false; reason: WorkspaceRefusal; message: string };

export interface WorkspacePolicy {
  /** Allowed roots (null = anywhere but `/` and the home folder itself). */
  workspaceRoots: readonly string[] | null;
  homeDir: string;
}

export { isInside };

/** Why a real folder may not be tracked, or null when it may (B28). */
export function refusalFor(real: string, policy: WorkspacePolicy): string | null {
  if (real === path.parse(real).root) return 'the file-system root is never tracked';
  if (real === realOrResolved(policy.homeDir))
    return 'the home folder itself is never tracked; name a project folder inside it';
  if (policy.workspaceRoots) {
    const roots = policy.workspaceRoots.map(realOrResolved);
    if (!roots.some((r) => isInside(r, real))) return 'outside RUNDIFF_WORKSPACE_ROOTS';
  }
  return pseudoFsRefusal(real);
}

/**
 * Resolves the folder a run names into a real, allowed directory and its kind. Never throws for a
 * bad folder: the refusal is a reason, because tracking problems never fail the run.
 */
export async function resolveWorkspace(
  workspace: string | null | undefined,
  policy: WorkspacePolicy,
): Promise<WorkspaceResolution> {
  if (workspace === undefined || workspace === null || workspace === '') {
    return { ok: false, reason: 'no_workspace', message: 'no workspace was named for this run' };
  }
  if (!path.isAbsolute(workspace)) {
    return { ok: false, reason: 'workspace_missing', message: 'workspace must be an absolute path' };
  }
  let real: string;
  try {
    real = fs.realpathSync(workspace);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') {
      return { ok: false, reason: 'workspace_unreadable', message: `cannot access ${workspace}` };
    }
    if (code === 'ENOTDIR')
      return { ok: false, reason: 'workspace_not_directory', message: `${workspace} is not a directory` };
    return { ok: false, reason: 'workspace_missing', message: `${workspace} does not exist` };
  }
  let stat: fs.Stats;
  try {
    stat = fs.statSync(real);
  } catch {
    return { ok: false, reason: 'workspace_missing', message: `${workspace} does not exist` };
  }
  if (!stat.isDirectory())
    return { ok: false, reason: 'workspace_not_directory', message: `${workspace} is not a directory` };
  const refusal = refusalFor(real, policy);
  if (refusal) return { ok: false, reason: 'workspace_not_allowed', message: refusal };
  try {
    fs.accessSync(real, fs.constants.R_OK | fs.constants.X_OK);
    const dir = fs.opendirSync(real);
    dir.closeSync();
  } catch {
    return { ok: false, reason: 'workspace_unreadable', message: `cannot read ${workspace}` };
  }
  let repo: RepoInfo | null = null;
  try {
    repo = await findRepo(real);
  } catch {
    repo = null; // git missing or broken: fall back to the file-system snapshot
  }
  return { ok: true, root: real, kind: repo ? 'git' : 'filesystem', repo };
}

/**
 * The server's own database files (db, -wal, -shm, -journal) that lie inside `root`, as paths
 * relative to it: tracking excludes them so rundiff never reports its own writes.
 */
export function ownFilesUnder(root: string, dbPath: string | null): string[] {
  if (!dbPath || dbPath === ':memory:') return [];
  const dbReal = path.join(realOrResolved(path.dirname(dbPath)), path.basename(dbPath));
  if (!isInside(root, dbReal)) return [];
  const rel = path.relative(root, dbReal).split(path.sep).join('/');
  return [rel, `${rel}-wal`, `${rel}-shm`, `${rel}-journal`];
}
