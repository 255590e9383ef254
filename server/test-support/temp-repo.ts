import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Test fixture: a real temporary folder, optionally a real git repository with one commit.
 * Tests drive real git with `git()` (the system git, plain environment) to set up states.
 */
export interface TempRepo {
  /** Real path of the folder. */
  dir: string;
  /** Runs the real git in the folder (setup only; the code under test uses server/git). */
  git(...args: string[]): string;
  write(rel: string, content: string | Buffer, mode?: number): void;
  read(rel: string): Buffer;
  rm(rel: string): void;
  /** `git add -A && git commit` with a fixed identity; returns the new commit id. */
  commit(message?: string): string;
  cleanup(): void;
}

export interface TempRepoOptions {
  files?: Record<string, string | Buffer>;
  /** false = a plain folder (no git). Default true. */
  git?: boolean;
  /** Commit the initial files. Default true when git. */
  commit?: boolean;
}

const fixtureEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return {
    ...env,
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.invalid',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.invalid',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
};

/**
 * The commit HEAD names, read from `.git` the way git keeps it in a fresh repository (HEAD naming a
 * loose branch ref): one git process less per commit. Null for any
 * other layout (a `.git` file, a packed or detached ref), which `git rev-parse` answers instead.
 */
function headFromFiles(dir: string): string | null {
  try {
    const head = fs.readFileSync(path.join(dir, '.git', 'HEAD'), 'utf8').trim();
    const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)?.[1];
    if (ref === undefined) return null;
    const oid = fs.readFileSync(path.join(dir, '.git', ref), 'utf8').trim();
    return /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(oid) ? oid : null;
  } catch {
    return null;
  }
}

export function createTempDir(prefix = 'rundiff-test-'): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export function createTempRepo(opts: TempRepoOptions = {}): TempRepo {
  const dir = createTempDir();
  const useGit = opts.git !== false;
  const git = (...args: string[]): string =>
    execFileSync('git', args, { cwd: dir, env: fixtureEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const write = (rel: string, content: string | Buffer, mode?: number) => {
    const abs = path.join(dir, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
    if (mode !== undefined) fs.chmodSync(abs, mode);
  };
  const repo: TempRepo = {
    dir,
    git,
    write,
    read: (rel) => fs.readFileSync(path.join(dir, rel)),
    rm: (rel) => fs.rmSync(path.join(dir, rel), { recursive: true, force: true }),
    commit: (message = 'commit') => {
      git('add', '-A');
      git('commit', '-q', '--allow-empty', '--no-verify', '-m', message);
      return headFromFiles(dir) ?? git('rev-parse', 'HEAD').trim();
    },
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
  if (useGit) git('init', '-q', '-b', 'main');
  for (const [rel, content] of Object.entries(opts.files ?? {})) write(rel, content);
  if (useGit && opts.commit !== false && Object.keys(opts.files ?? {}).length > 0) repo.commit('initial');
  return repo;
}
