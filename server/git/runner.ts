import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { AppError } from '../errors.ts';

/**
 * The only place in rundiff that spawns git. No shell, an argument array, a scrubbed environment,
 * config overrides that switch off everything a repository could make git execute, and a deadline
 * after which the process is killed. Output stays bytes (Buffer); parsers in this folder decode it.
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

/** Runs git once. Rejects with AppError `git_missing`, `git_timeout`, `not_a_repository` or `git_failed`. */
export function runGit(opts: GitRunOptions): Promise<GitResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const okCodes = opts.okExitCodes ?? [0];
  const maxStdout = opts.maxStdoutBytes ?? 512 * 1024 * 1024;
  const argv = gitArgv(opts.args);
  return new Promise<GitResult>((resolve, reject) => {
    let env: Record<string, string>;
    try {
      // The caller's extra entries cannot replace the overrides: those are set last.
      env = { ...scrubbedGitEnv(opts.env), ...configEnv(opts.config) };
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    let child;
    try {
      child = spawn(opts.gitBinary ?? 'git', argv, {
        cwd: opts.cwd,
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
      });
    } catch (err) {
      reject(
        new AppError('git_missing', 'git could not be started', {
          cause: err,
          hint: 'Install git 2.30 or newer and put it on PATH.',
        }),
      );
      return;
    }
    const out: Buffer[] = [];
    let outBytes = 0;
    let stdoutTruncated = false;
    const errChunks: Buffer[] = [];
    let errBytes = 0;
    let timedOut = false;
    let settled = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      if (stdoutTruncated) return;
      if (outBytes + chunk.length > maxStdout) {
        out.push(chunk.subarray(0, maxStdout - outBytes));
        outBytes = maxStdout;
        stdoutTruncated = true;
        child.kill('SIGKILL');
        return;
      }
      out.push(chunk);
      outBytes += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      // Keep only a bounded tail of stderr.
      errChunks.push(chunk);
      errBytes += chunk.length;
      while (errBytes > 16_384 && errChunks.length > 1) errBytes -= errChunks.shift()!.length;
    });
    child.stdin.on('error', () => {
      /* git may exit before reading all of stdin; the exit code tells what happened */
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err.code === 'ENOENT' && !existsSync(opts.cwd)) {
        reject(new AppError('not_found', `folder does not exist: ${opts.cwd}`));
      } else if (err.code === 'ENOENT' || err.code === 'EACCES') {
        reject(
          new AppError('git_missing', `git could not be started (${err.code})`, {
            hint: 'Install git 2.30 or newer and put it on PATH.',
          }),
        );
      } else {
        reject(new AppError('git_failed', `git could not be started: ${err.message}`));
      }
    });
    child.on('close', (code, signal) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const stderr = Buffer.concat(errChunks).toString('utf8');
      if (timedOut) {
        reject(
          new AppError(
            'git_timeout',
            `git ${opts.args[0] ?? ''} did not finish within ${timeoutMs} ms and was killed`,
            {
              details: { timeout_ms: timeoutMs, subcommand: opts.args[0] ?? null },
            },
          ),
        );
        return;
      }
      const exitCode = code ?? (signal ? 128 : 1);
      const stdout = Buffer.concat(out);
      if (stdoutTruncated || okCodes.includes(exitCode)) {
        resolve({ stdout, stderr, exitCode, stdoutTruncated });
        return;
      }
      if (/not a git repository/i.test(stderr)) {
        reject(new AppError('not_a_repository', 'not a git repository', { details: { path: opts.cwd } }));
        return;
      }
      reject(
        new AppError('git_failed', `git ${opts.args[0] ?? ''} failed with exit code ${exitCode}`, {
          details: { exit_code: exitCode, signal: signal ?? null, stderr: tail(stderr.trim()) },
        }),
      );
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}
