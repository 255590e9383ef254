import { existsSync } from 'node:fs';
import { AppError } from '../errors.ts';
import { createGitSpawner, type GitSpawnerInfo } from './helper-client.ts';
import type { GitLauncher, GitSpawnEnd } from './launch.ts';
import { discoveredWorkTree } from './work-tree-pin.ts';

/**
 * The only way rundiff runs git. No shell, an argument array, a scrubbed environment, config
 * overrides that switch off everything a repository could make git execute, and a deadline after
 * which the process is killed. git is spawned by the long-lived helper process
 * (`helper-client.ts`), so a spawn never forks the server. Output stays bytes (Buffer); parsers in
 * this folder decode it.
 */

/**
 * One config override: the full key (`section.subsection.name`) and its value. Kept as a pair all
 * the way to git: `-c key=value` is split by git at the first `=`, so a subsection holding `=` (a
 * filter driver named `x=y`) would override a different key and leave the real one in force.
 */
export type GitConfigPair = readonly [key: string, value: string];

export interface GitRunOptions {
  /** Folder git runs in (passed as the child's cwd). */
  cwd: string;
  args: readonly string[];
  /** Bytes written to stdin, then stdin is closed. */
  input?: Buffer | string;
  /** Kill deadline (ms). Default 10,000. */
  timeoutMs?: number;
  /** Exit codes that are not failures. Default [0]. */
  okExitCodes?: readonly number[];
  /** Extra environment entries on top of the scrubbed base (e.g. GIT_INDEX_FILE for a private index). */
  env?: Readonly<Record<string, string>>;
  /** Extra config overrides (key, value), passed the same way as the hardening list. */
  config?: readonly GitConfigPair[];
  /** Stop reading stdout past this many bytes (the child is killed; `stdoutTruncated` set). Default 512 MiB. */
  maxStdoutBytes?: number;
  /** The git executable; tests point it at a missing file. Default `git` on PATH. */
  gitBinary?: string;
}

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  exitCode: number;
  stdoutTruncated: boolean;
}

export const DEFAULT_GIT_TIMEOUT_MS = 10_000;

/**
 * Overrides applied to every git call. Command-line config wins over the repository's own
 * `.git/config`, so nothing a workspace planted there runs: no fsmonitor daemon or hook, no pager,
 * no external diff; the untracked cache is neither read nor written.
 */
export const HARDENING_CONFIG: readonly GitConfigPair[] = Object.freeze([
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  ['core.untrackedCache', 'false'],
  ['core.quotePath', 'false'],
  ['core.askPass', ''],
  ['core.sshCommand', ''],
  ['color.ui', 'false'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  ['advice.detachedHead', 'false'],
  ['protocol.allow', 'never'],
] as const);

/**
 * The overrides as `GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_<n>` / `GIT_CONFIG_VALUE_<n>` (git 2.31+):
 * git takes each key whole, so any key git can store arrives intact. A key or value git could not
 * receive this way (a NUL, or a newline in the key, which git refuses) is an error, never skipped.
 */
export function configEnv(config: readonly GitConfigPair[] = []): Record<string, string> {
  const all = [...HARDENING_CONFIG, ...config];
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(all.length) };
  all.forEach(([key, value], i) => {
    if (key.includes('\0') || value.includes('\0') || key.includes('\n') || key === '') {
      throw new AppError('git_failed', 'a config override cannot be passed to git', {
        details: { key: JSON.stringify(key) },
      });
    }
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/** Environment variables passed through from the parent; every other one (all of GIT_*) is dropped. */
const PASSTHROUGH_ENV = ['PATH', 'HOME', 'XDG_CONFIG_HOME', 'TMPDIR', 'SYSTEMROOT'] as const;

export function scrubbedGitEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSTHROUGH_ENV) {
    const v = process.env[name];
    if (v !== undefined) env[name] = v;
  }
  Object.assign(env, {
    LC_ALL: 'C',
    LANG: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_NO_LAZY_FETCH: '1',
    GIT_PROTOCOL_FROM_USER: '0',
  });
  Object.assign(env, extra);
  return env;
}

/**
 * Subcommands that can produce patches. A repository's `diff.external` or a textconv driver would
 * run for them, and an empty `diff.external=` override makes git try to run "" instead, so these
 * always get `--no-ext-diff --no-textconv` right after the subcommand.
 */
const PATCH_COMMANDS = new Set([
  'diff',
  'log',
  'show',
  'diff-tree',
  'diff-index',
  'diff-files',
  'whatchanged',
  'format-patch',
]);

/** Full argument vector: global options, then the subcommand (overrides travel in the environment). */
export function gitArgv(args: readonly string[]): string[] {
  const argv: string[] = ['--no-pager', '--no-replace-objects'];
  const [sub, ...rest] = args;
  if (sub === undefined) return argv;
  argv.push(sub);
  if (PATCH_COMMANDS.has(sub)) {
    for (const flag of ['--no-ext-diff', '--no-textconv']) if (!rest.includes(flag)) argv.push(flag);
  }
  argv.push(...rest);
  return argv;
}

function tail(text: string, max = 2000): string {
  return text.length <= max ? text : '…' + text.slice(text.length - max);
}

/**
 * After a kill, how long a call waits for git's answer before it answers `git_timeout` anyway
 * (a git stuck in an uninterruptible system call, or a helper that stopped answering).
 */
const KILL_GRACE_MS = 1_000;

const spawner = createGitSpawner();

/** Stops the git helper process (server shutdown); the next git call starts a new one. */
export function closeGitHelper(): Promise<void> {
  return spawner.close();
}

/** Whether git runs from the helper process, its process id, and the calls waiting on it. */
export function gitHelperInfo(): GitSpawnerInfo {
  return spawner.info();
}

/** Runs git once. Rejects with AppError `git_missing`, `git_timeout`, `not_a_repository` or `git_failed`. */
export function runGit(opts: GitRunOptions): Promise<GitResult> {
  return runGitVia(spawner, opts);
}

/** `runGit` with git started by the given launcher (the helper's client, or a direct spawn). */
export function runGitVia(launcher: GitLauncher, opts: GitRunOptions): Promise<GitResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  let env: Record<string, string>;
  try {
    // The caller's extra entries cannot replace the overrides: those are set last.
    env = { ...scrubbedGitEnv(opts.env), ...configEnv(opts.config) };
    // A planted core.worktree must not point git at another folder: the work tree is the folder
    // git finds `.git` in, unless the caller named the repository itself.
    if (env.GIT_DIR === undefined && env.GIT_WORK_TREE === undefined) {
      const workTree = discoveredWorkTree(opts.cwd);
      if (workTree !== null) env.GIT_WORK_TREE = workTree;
    }
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
  const git = launcher.launch({
    file: opts.gitBinary ?? 'git',
    args: gitArgv(opts.args),
    cwd: opts.cwd,
    env,
    input: typeof opts.input === 'string' ? Buffer.from(opts.input, 'utf8') : opts.input,
    maxStdoutBytes: opts.maxStdoutBytes ?? 512 * 1024 * 1024,
  });
  return new Promise<GitResult>((resolve, reject) => {
    let timedOut = false;
    let grace: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      git.kill();
      grace = setTimeout(() => settle({ kind: 'lost', reason: 'no answer after the kill' }), KILL_GRACE_MS);
    }, timeoutMs);
    let settled = false;
    const settle = (end: GitSpawnEnd) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      try {
        resolve(gitAnswer(opts, end, timedOut ? timeoutMs : null));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    };
    void git.end.then(settle);
  });
}

/** How an ended git answers: its result, or the AppError a caller degrades on. */
function gitAnswer(opts: GitRunOptions, end: GitSpawnEnd, timedOutAfterMs: number | null): GitResult {
  const sub = opts.args[0] ?? '';
  if (timedOutAfterMs !== null) {
    throw new AppError('git_timeout', `git ${sub} did not finish within ${timedOutAfterMs} ms and was killed`, {
      details: { timeout_ms: timedOutAfterMs, subcommand: opts.args[0] ?? null },
    });
  }
  if (end.kind === 'spawn-error') {
    if (end.sync) {
      throw new AppError('git_missing', 'git could not be started', {
        cause: new Error(end.message),
        hint: 'Install git 2.30 or newer and put it on PATH.',
      });
    }
    if (end.code === 'ENOENT' && !existsSync(opts.cwd)) {
      throw new AppError('not_found', `folder does not exist: ${opts.cwd}`);
    }
    if (end.code === 'ENOENT' || end.code === 'EACCES') {
      throw new AppError('git_missing', `git could not be started (${end.code})`, {
        hint: 'Install git 2.30 or newer and put it on PATH.',
      });
    }
    throw new AppError('git_failed', `git could not be started: ${end.message}`);
  }
  if (end.kind === 'lost') {
    // Like a git killed mid-call: a failure, never a partial answer.
    throw new AppError('git_failed', `git ${sub} did not finish: ${end.reason}`, {
      details: { exit_code: null, signal: null, stderr: '' },
    });
  }
  const exitCode = end.code ?? (end.signal ? 128 : 1);
  const { stdout, stderr, stdoutTruncated } = end;
  if (stdoutTruncated || (opts.okExitCodes ?? [0]).includes(exitCode)) {
    return { stdout, stderr, exitCode, stdoutTruncated };
  }
  if (/not a git repository/i.test(stderr)) {
    throw new AppError('not_a_repository', 'not a git repository', { details: { path: opts.cwd } });
  }
  throw new AppError('git_failed', `git ${sub} failed with exit code ${exitCode}`, {
    details: { exit_code: exitCode, signal: end.signal ?? null, stderr: tail(stderr.trim()) },
  });
}
