import os from 'node:os';
import path from 'node:path';
import { DEFAULT_LIMITS, LIMIT_ENV, type Limits } from '../shared/index.ts';
import { AppError } from './errors.ts';

/** Everything configurable, resolved once (flags > environment > defaults) and frozen. */
export interface Config {
  /** Bind address. Default 127.0.0.1. RUNDIFF_HOST / --host */
  host: string;
  /** TCP port (0 = ephemeral). Default 7420. RUNDIFF_PORT / --port */
  port: number;
  /** SQLite file. Default $XDG_DATA_HOME/rundiff/rundiff.db. RUNDIFF_DB / --db */
  dbPath: string;
  /** Bearer token for /api/* and the socket handshake; null = none. RUNDIFF_TOKEN */
  token: string | null;
  /** Only workspaces inside one of these (realpaths) are tracked; null = any allowed folder. RUNDIFF_WORKSPACE_ROOTS */
  workspaceRoots: string[] | null;
  /** git_commit waits for a person's decision. RUNDIFF_REQUIRE_COMMIT_APPROVAL=1 / --require-commit-approval */
  requireCommitApproval: boolean;
  /** How long a commit approval waits (ms). Default 120,000. RUNDIFF_APPROVAL_TIMEOUT_MS */
  approvalTimeoutMs: number;
  /** Extra Host header values accepted on a non-loopback bind. RUNDIFF_ALLOWED_HOSTS (comma or colon separated) */
  allowedHosts: string[];
  /** The user's home folder (never tracked itself). */
  homeDir: string;
  limits: Readonly<Limits>;
}

/** Command-line flags as parsed by the CLI (all optional; strings as typed). */
export interface ConfigFlags {
  host?: string;
  port?: string | number;
  db?: string;
  requireCommitApproval?: boolean;
  /** Limits by their key, e.g. `{maxScannedFiles: '100'}` from `--max-scanned-files 100`. */
  limits?: Partial<Record<keyof Limits, string | number>>;
}

type Env = Record<string, string | undefined>;

/** `RUNDIFF_MAX_SCANNED_FILES` -> `--max-scanned-files`. */
export function limitFlagName(key: keyof Limits): string {
  return (
    '--' +
    LIMIT_ENV[key]
      .replace(/^RUNDIFF_/, '')
      .toLowerCase()
      .replace(/_/g, '-')
  );
}

export function defaultDbPath(env: Env = process.env, home = os.homedir()): string {
  const dataHome =
    env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(home, '.local', 'share');
  return path.join(dataHome, 'rundiff', 'rundiff.db');
}

function parseCount(name: string, raw: string | number, min = 0): number {
  const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
  if (!Number.isSafeInteger(n) || n < min || String(raw).trim() === '') {
    throw new AppError('invalid_input', `${name} must be a whole number >= ${min}, got ${JSON.stringify(String(raw))}`);
  }
  return n;
}

function pick<T>(flag: T | undefined, envValue: string | undefined, fallback: T): T | string {
  if (flag !== undefined) return flag;
  if (envValue !== undefined && envValue !== '') return envValue;
  return fallback;
}

export function resolveConfig(flags: ConfigFlags = {}, env: Env = process.env): Readonly<Config> {
  const homeDir = env.HOME && path.isAbsolute(env.HOME) ? env.HOME : os.homedir();
  const limits = { ...DEFAULT_LIMITS } as Limits;
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) {
    const raw = pick(flags.limits?.[key], env[LIMIT_ENV[key]], undefined);
    if (raw !== undefined) limits[key] = parseCount(`${LIMIT_ENV[key]} / ${limitFlagName(key)}`, raw, 1);
  }
  const port = parseCount('RUNDIFF_PORT / --port', pick(flags.port, env.RUNDIFF_PORT, 7420), 0);
  if (port > 65535) throw new AppError('invalid_input', `port must be 0..65535, got ${port}`);
  const roots = env.RUNDIFF_WORKSPACE_ROOTS
    ? env.RUNDIFF_WORKSPACE_ROOTS.split(':')
        .filter((r) => r !== '')
        .map((r) => path.resolve(r))
    : null;
  const dbRaw = String(pick(flags.db, env.RUNDIFF_DB, defaultDbPath(env, homeDir)));
  const config: Config = {
    host: String(pick(flags.host, env.RUNDIFF_HOST, '127.0.0.1')),
    port,
    dbPath: dbRaw === ':memory:' ? dbRaw : path.resolve(dbRaw),
    token: env.RUNDIFF_TOKEN ? env.RUNDIFF_TOKEN : null,
    workspaceRoots: roots && roots.length > 0 ? roots : null,
    requireCommitApproval: flags.requireCommitApproval === true || env.RUNDIFF_REQUIRE_COMMIT_APPROVAL === '1',
    approvalTimeoutMs: parseCount(
      'RUNDIFF_APPROVAL_TIMEOUT_MS',
      env.RUNDIFF_APPROVAL_TIMEOUT_MS && env.RUNDIFF_APPROVAL_TIMEOUT_MS !== ''
        ? env.RUNDIFF_APPROVAL_TIMEOUT_MS
        : 120_000,
      1,
    ),
    allowedHosts: (env.RUNDIFF_ALLOWED_HOSTS ?? '')
      .split(/[,\s]+/)
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== ''),
    homeDir,
    limits: Object.freeze(limits),
  };
  return Object.freeze(config);
}
