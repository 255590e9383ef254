import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../../errors.ts';
import { findRepo } from '../repo.ts';
import { realOrResolved } from '../../fs/index.ts';
import { isInside } from '../../paths/index.ts';

/**
 * Which repository a tool call means (docs/contract.md section 5). Known repositories come from the
 * workspace folders (a folder inside a repository is that repository; a folder that is not holds
 * the repositories found below it). `repository` is matched by label, then root path, then a unique
 * folder name; an unknown or ambiguous name is answered with the valid ones, never a guess.
 */

export interface KnownRepository {
  /** The path relative to the workspace or RUNDIFF_WORKSPACE_ROOTS entry that contains it, else its folder name. */
  label: string;
  /** Real path of the folder (a workspace, or a repository found inside one). */
  root: string;
}

export interface RepositoryCatalog {
  /** Known repositories; `refresh` looks again (a repository may have been created since). */
  list(refresh?: boolean): Promise<KnownRepository[]>;
  /** Root of the repository used when `repository` is absent, or null for "the only one". */
  defaultRoot(): string | null;
}

/** A selected repository, opened: its work tree's top level and git dirs. */
export interface ToolRepo extends KnownRepository {
  top: string;
  gitDir: string;
  commonDir: string;
}

/** The label of `root`: relative to the closest base that strictly contains it, else its folder name. */
export function labelFor(root: string, bases: readonly string[]): string {
  let best: string | null = null;
  for (const base of bases) {
    if (base === root || !isInside(base, root)) continue;
    if (best === null || base.length > best.length) best = base;
  }
  if (best === null) return path.basename(root) || root;
  return path.relative(best, root).split(path.sep).join('/');
}

/** The value an agent can pass back as `repository`: the label when unique, else the root path. */
export function candidateNames(repos: readonly KnownRepository[]): string[] {
  const counts = new Map<string, number>();
  for (const r of repos) counts.set(r.label, (counts.get(r.label) ?? 0) + 1);
  return repos.map((r) => ((counts.get(r.label) ?? 0) > 1 ? r.root : r.label));
}

function ambiguous(requested: string, matches: readonly KnownRepository[]): AppError {
  return new AppError(
    'repository_ambiguous',
    `repository ${JSON.stringify(requested)} matches ${matches.length} repositories`,
    {
      hint: 'Pass one of details.candidates as repository.',
      details: { repository: requested, candidates: candidateNames(matches) },
    },
  );
}

/** Picks the repository a call means, or throws `repository_not_found` / `repository_ambiguous`. */
export function selectRepository(
  repos: readonly KnownRepository[],
  requested: string | undefined,
  defaultRoot: string | null,
): KnownRepository {
  if (requested === undefined) {
    if (defaultRoot !== null) {
      const hit = repos.find((r) => r.root === defaultRoot);
      if (hit) return hit;
      const below = repos.filter((r) => isInside(defaultRoot, r.root));
      if (below.length === 1) return below[0]!;
      if (below.length > 1) return throwAmbiguous('(default)', below);
    }
    if (repos.length === 1) return repos[0]!;
    if (repos.length === 0) {
      throw new AppError('repository_not_found', 'no git repository is known', {
        hint: 'Start the tools with a workspace folder that is (or contains) a git repository.',
        details: { candidates: [] },
      });
    }
    return throwAmbiguous('(default)', repos);
  }
  const byLabel = repos.filter((r) => r.label === requested);
  if (byLabel.length === 1) return byLabel[0]!;
  if (byLabel.length > 1) return throwAmbiguous(requested, byLabel);
  if (path.isAbsolute(requested)) {
    const real = realOrResolved(requested);
    const byRoot = repos.filter((r) => r.root === real);
    if (byRoot.length >= 1) return byRoot[0]!;
  }
  const name = requested.replace(/\/+$/, '');
  const byName = repos.filter((r) => path.basename(r.root) === name);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) return throwAmbiguous(requested, byName);
  throw new AppError('repository_not_found', `no known repository matches ${JSON.stringify(requested)}`, {
    hint: 'Pass one of details.candidates as repository (a label, a root path or a unique folder name).',
    details: { repository: requested, candidates: candidateNames(repos) },
  });
}

function throwAmbiguous(requested: string, matches: readonly KnownRepository[]): never {
  throw ambiguous(requested, matches);
}

/** Opens a known repository: its top level and git dirs, or `not_a_repository`. */
export async function openRepository(known: KnownRepository): Promise<ToolRepo> {
  let info;
  try {
    info = await findRepo(known.root);
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_found') info = null;
    else throw err;
  }
  if (!info) {
    throw new AppError('not_a_repository', `${known.label} is not a git repository`, {
      hint: 'Run `git init` there, or pass another repository.',
      details: { repository: known.label, path: known.root },
    });
  }
  return { ...known, top: info.topLevel, gitDir: info.gitDir, commonDir: info.commonDir };
}

/** Folders never searched for nested repositories. */
const SKIP_DIRS = new Set([
  'node_modules',
  '.git',
  'dist',
  'build',
  'target',
  '.venv',
  'venv',
  '__pycache__',
  '.cache',
]);

/** Repositories below a folder that is not one itself (depth-limited, for workspaces holding several). */
function findNestedRepositories(dir: string, depth: number, out: string[], max: number): void {
  if (depth === 0 || out.length >= max) return;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (!e.isDirectory() || SKIP_DIRS.has(e.name) || e.name.startsWith('.')) continue;
    const sub = path.join(dir, e.name);
    if (fs.existsSync(path.join(sub, '.git'))) out.push(sub);
    else findNestedRepositories(sub, depth - 1, out, max);
    if (out.length >= max) return;
  }
}

export interface WorkspaceCatalogOptions {
  /** Workspace folders, in order; the first is the default repository. */
  workspaces: readonly string[];
  /** RUNDIFF_WORKSPACE_ROOTS (labels are relative to these too). */
  workspaceRoots?: readonly string[] | null;
  /** How deep to look for repositories inside a workspace that is not one. Default 3. */
  searchDepth?: number;
}

/** The catalog `rundiff mcp` uses: its `--workspace` folders. */
export function createWorkspaceCatalog(opts: WorkspaceCatalogOptions): RepositoryCatalog {
  const workspaces = opts.workspaces.map(realOrResolved);
  const bases = [...workspaces, ...(opts.workspaceRoots ?? []).map(realOrResolved)];
  const depth = opts.searchDepth ?? 3;
  let cached: KnownRepository[] | null = null;
  const discover = async (): Promise<KnownRepository[]> => {
    const roots: string[] = [];
    for (const ws of workspaces) {
      let inRepo = false;
      try {
        inRepo = (await findRepo(ws)) !== null;
      } catch {
        inRepo = false;
      }
      if (inRepo) roots.push(ws);
      else findNestedRepositories(ws, depth, roots, 200);
      // A workspace that is no repository (yet) stays known, so it is named in candidates and errors.
      if (!inRepo && !roots.some((r) => isInside(ws, r))) roots.push(ws);
    }
    const unique = [...new Set(roots)];
    return unique.map((root) => ({ root, label: labelFor(root, bases) }));
  };
  return {
    async list(refresh = false) {
      if (cached === null || refresh) cached = await discover();
      return cached;
    },
    defaultRoot: () => workspaces[0] ?? null,
  };
}

/** A fixed catalog (REST builds one per request from session workspaces and RUNDIFF_WORKSPACE_ROOTS). */
export function createStaticCatalog(
  repos: readonly KnownRepository[],
  defaultRoot: string | null = null,
): RepositoryCatalog {
  return { list: async () => [...repos], defaultRoot: () => defaultRoot };
}

/** Resolves the call's repository through a catalog, looking again once when the name is unknown. */
export async function resolveRepository(catalog: RepositoryCatalog, requested: string | undefined): Promise<ToolRepo> {
  let repos = await catalog.list();
  let known: KnownRepository;
  try {
    known = selectRepository(repos, requested, catalog.defaultRoot());
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'repository_not_found') throw err;
    repos = await catalog.list(true);
    known = selectRepository(repos, requested, catalog.defaultRoot());
  }
  return openRepository(known);
}
