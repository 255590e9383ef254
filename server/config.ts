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
  /** PostgreSQL URL (`postgres://...`) of a shared store; null = the SQLite file. RUNDIFF_DATABASE_URL / --database-url */
  databaseUrl: string | null;
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
  /** Slow-client bounds of the HTTP server (ms); see `HTTP_TIMEOUT_ENV`. */
  http: Readonly<HttpTimeouts>;
  limits: Readonly<Limits>;
}

/**
 * How long the HTTP server waits for a client. Without them a client that announces a large body
 * and then stalls (or trickles its headers) holds a connection for Node's default five minutes.
 */
export interface HttpTimeouts {
  /** The whole request, headers and body, must arrive within this. Default 30,000. */
  requestTimeoutMs: number;
  /** The request headers must arrive within this; never more than `requestTimeoutMs`. Default 10,000. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. Default 5,000. */
  keepAliveTimeoutMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: Readonly<HttpTimeouts> = Object.freeze({
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
});

export const HTTP_TIMEOUT_ENV: Readonly<Record<keyof HttpTimeouts, string>> = Object.freeze({
  requestTimeoutMs: 'RUNDIFF_REQUEST_TIMEOUT_MS',
  headersTimeoutMs: 'RUNDIFF_HEADERS_TIMEOUT_MS',
  keepAliveTimeoutMs: 'RUNDIFF_KEEP_ALIVE_TIMEOUT_MS',
});

/** Command-line flags as parsed by the CLI (all optional; strings as typed). */
export interface ConfigFlags {
  host?: string;
  port?: string | number;
  db?: string;
  databaseUrl?: string;
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

/**
 * The token as a client must send it in `Authorization: Bearer <token>`: printable ASCII without
 * spaces. Anything else (only whitespace, a space inside, a control or non-ASCII character) would
 * start a server no client can use, so it is refused here with the reason. The token itself is
 * never echoed.
 */
export function parseToken(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  const hint = 'use printable ASCII without spaces, e.g. the output of `openssl rand -hex 32`';
  if (raw.trim() === '')
    throw new AppError('invalid_input', 'RUNDIFF_TOKEN is only whitespace, so no client could send it', { hint });
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c >= 0x21 && c <= 0x7e) continue;
    const what =
      c === 0x20 || /\s/.test(raw[i]!)
        ? 'whitespace'
        : c < 0x20 || c === 0x7f
          ? 'a control character'
          : 'a non-ASCII character';
    throw new AppError(
      'invalid_input',
      `RUNDIFF_TOKEN contains ${what} at position ${i + 1}, which an "Authorization: Bearer" header cannot carry`,
      { hint },
    );
  }
  return raw;
}

function resolveHttpTimeouts(env: Env): HttpTimeouts {
  const value = (key: keyof HttpTimeouts) => {
    const raw = env[HTTP_TIMEOUT_ENV[key]];
    return raw === undefined || raw === '' ? DEFAULT_HTTP_TIMEOUTS[key] : parseCount(HTTP_TIMEOUT_ENV[key], raw, 1);
  };
  const requestTimeoutMs = value('requestTimeoutMs');
  // Node refuses a headers timeout longer than the request timeout; lowering only the latter is fine.
  return {
    requestTimeoutMs,
    headersTimeoutMs: Math.min(value('headersTimeoutMs'), requestTimeoutMs),
    keepAliveTimeoutMs: value('keepAliveTimeoutMs'),
  };
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
    databaseUrl: String(pick(flags.databaseUrl, env.RUNDIFF_DATABASE_URL, '')) || null,
    token: parseToken(env.RUNDIFF_TOKEN),
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
    http: Object.freeze(resolveHttpTimeouts(env)),
    limits: Object.freeze(limits),
  };
  return Object.freeze(config);
}
