import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import {
  candidateNames,
  createStaticCatalog,
  labelFor,
  type KnownRepository,
  type RepositoryCatalog,
} from '../git/index.ts';
import type { Store } from '../store/index.ts';
import { isInside, refusalFor } from '../workspace/index.ts';

/**
 * The repositories the REST git tools may use (docs/contract.md section 5): the workspaces of stored
 * sessions and runs that lie in a git repository, plus each RUNDIFF_WORKSPACE_ROOTS folder that is a
 * repository or, when it is not, the repositories directly inside it (one level: `~/code/<repo>`).
 * Only allowed workspaces count (inside the roots when set; never `/` or the home folder itself).
 * Listing is file-system only (a `.git` entry in the folder or above it); the chosen repository is
 * then opened with git, which has the last word (`not_a_repository`).
 */

/** Distinct workspaces considered, most recently active first (older ones still match by path). */
const MAX_WORKSPACES = 500;

const SKIP_DIRS = new Set(['node_modules', 'dist', 'build', 'target', 'venv', '__pycache__']);

function realDir(p: string): string | null {
  try {
    const real = fs.realpathSync(p);
    return fs.statSync(real).isDirectory() ? real : null;
  } catch {
    return null;
  }
}

/** True when the folder or one above it has a `.git` entry (a repository, worktree or submodule). */
export function inGitRepository(dir: string): boolean {
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, '.git'))) return true;
    if (path.dirname(d) === d) return false;
  }
}

type Policy = Pick<Config, 'workspaceRoots' | 'homeDir'>;

function allowedRepoDir(p: string, policy: Policy): string | null {
  if (!path.isAbsolute(p)) return null;
  const real = realDir(p);
  if (!real || refusalFor(real, policy) !== null) return null;
  return inGitRepository(real) ? real : null;
}

function rootRepositories(root: string, policy: Policy): string[] {
  const real = realDir(root);
  if (!real) return [];
  if (inGitRepository(real)) return refusalFor(real, policy) === null ? [real] : [];
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(real, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !SKIP_DIRS.has(e.name))
    .map((e) => path.join(real, e.name))
    .filter((d) => fs.existsSync(path.join(d, '.git')))
    .sort();
}

export async function listRestRepositories(store: Store, policy: Policy): Promise<KnownRepository[]> {
  const roots = (policy.workspaceRoots ?? []).map((r) => realDir(r) ?? path.resolve(r));
  const workspaces = [
    ...(await store.catalog.sessionWorkspaces(MAX_WORKSPACES)),
    ...(await store.catalog.runWorkspaces(MAX_WORKSPACES)),
  ];
  const found: string[] = [];
  for (const ws of workspaces) {
    const dir = allowedRepoDir(ws, policy);
    if (dir) found.push(dir);
  }
  for (const root of policy.workspaceRoots ?? []) found.push(...rootRepositories(root, policy));
  return [...new Set(found)].map((root) => ({ root, label: labelFor(root, roots) }));
}

/**
 * The catalog of one REST call. With `session_id`, that session's workspace is the default; when
 * the workspace is not a known repository the call is refused rather than quietly pointed at
 * another repository.
 */
export async function restCatalog(
  store: Store,
  policy: Policy,
  sessionId: string | undefined,
  requested: string | undefined,
): Promise<RepositoryCatalog> {
  const repos = await listRestRepositories(store, policy);
  let defaultRoot: string | null = null;
  if (sessionId !== undefined) {
    const session = await store.sessions.get(sessionId);
    if (!session) {
      throw new AppError('not_found', `no session ${JSON.stringify(sessionId)}`, {
        details: { session_id: sessionId },
      });
    }
    if (session.workspace !== null) {
      defaultRoot = realDir(session.workspace) ?? path.resolve(session.workspace);
      const known = repos.some((r) => r.root === defaultRoot || isInside(defaultRoot!, r.root));
      if (!known && requested === undefined) {
        throw new AppError(
          'repository_not_found',
          `the workspace of session ${JSON.stringify(sessionId)} is not a known git repository`,
          {
            hint: 'Pass repository (one of details.candidates), or use a session whose workspace is a git repository.',
            details: { session_id: sessionId, workspace: session.workspace, candidates: candidateNames(repos) },
          },
        );
      }
    }
  }
  return createStaticCatalog(repos, defaultRoot);
}
