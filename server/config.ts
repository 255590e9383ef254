import { isIP, isIPv6 } from 'node:net';
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
  /** The PostgreSQL store's pool, per server process (unused on SQLite). */
  database: Readonly<DatabaseSettings>;
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
  /** Edge to centre: where this server sends its results, and which edges it accepts. */
  edge: Readonly<EdgeSettings>;
}

/** Edge to centre (docs/deployment.md). */
export interface DatabaseSettings {
  /** Connections kept at most. Default 10. RUNDIFF_DATABASE_POOL_MAX */
  maxConnections: number;
  /** A statement running longer is cancelled and its step fails (ms). Default 30,000. RUNDIFF_DATABASE_STATEMENT_TIMEOUT_MS */
  statementTimeoutMs: number;
  /** Waiting longer for a free connection fails the step (ms). Default 10,000. RUNDIFF_DATABASE_CONNECT_TIMEOUT_MS */
  connectTimeoutMs: number;
}

export interface EdgeSettings {
  /** The centre's URL (`http(s)://host:port`); null = a server of its own. RUNDIFF_UPSTREAM / --upstream */
  upstream: string | null;
  /** The token this edge presents to the centre. RUNDIFF_UPSTREAM_TOKEN / --upstream-token */
  upstreamToken: string | null;
  /** Edges this server accepts, each by name and token. RUNDIFF_EDGE_TOKENS=name=token,name2=token2 */
  acceptedEdges: readonly { edge: string; token: string }[];
  /** Largest batch body an edge may send (bytes). Default 64 MiB. RUNDIFF_EDGE_MAX_BATCH_BYTES */
  maxBatchBytes: number;
  /** Longest wait between tries while the centre is unreachable (ms). Default 30,000. RUNDIFF_UPSTREAM_RETRY_MAX_MS */
  retryMaxMs: number;
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
  upstream?: string;
  upstreamToken?: string;
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
  // Digits only: Number() would also take `0x100`, `1e5` or `0b11`.
  const text = String(raw).trim();
  const n = typeof raw === 'number' ? raw : /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min) {
    throw new AppError('invalid_input', `${name} must be a whole number >= ${min}, got ${JSON.stringify(String(raw))}`);
  }
  return n;
}

/**
 * A setting the command line or the environment got wrong: every command refuses it as a usage
 * error (exit 2) before doing anything, rather than carrying on with a value it cannot use.
 */
export class SettingError extends AppError {
  constructor(message: string, hint: string) {
    super('invalid_input', message, { hint });
    this.name = 'SettingError';
  }
}

/** Dot-separated labels of letters, digits, `-` and `_` (container names use it). */
const HOST_NAME =
  /^(?=.{1,253}\.?$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;

/**
 * The host setting is a bare host name or IP address: clients build `http://<host>:<port>` from it
 * and `serve` listens on it. A scheme, a port or a path in it (`127.0.0.1:7561`, `http://box`) is
 * refused: read as a host it would name a server that cannot exist, and `rundiff run` would record
 * into its local database while the server meant is running. `[::1]` is taken as `::1`.
 */
export function parseHost(name: string, raw: string): string {
  const bracketed = /^\[(.*)\]$/.exec(raw);
  if (bracketed && isIPv6(bracketed[1]!)) return bracketed[1]!;
  if (isIP(raw) !== 0 || HOST_NAME.test(raw)) return raw;
  throw new SettingError(`${name} ${JSON.stringify(raw)} is not a host name or IP address`, hostHint(name, raw));
}

function hostHint(name: string, raw: string): string {
  const plain = 'write a host name or an IP address alone (localhost, 127.0.0.1, ::1): no scheme, port or path';
  const bare = raw.replace(/^[a-z][\w+.-]*:\/\//i, '');
  let url: URL;
  try {
    url = new URL(`http://${bare}`);
  } catch {
    return plain;
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '' || !(isIP(host) !== 0 || HOST_NAME.test(host))) return plain;
  const portName = name === '--host' ? '--port' : 'RUNDIFF_PORT';
  const hostPart = name === '--host' ? `--host ${host}` : `RUNDIFF_HOST=${host}`;
  const portPart = url.port === '' ? '' : name === '--host' ? ` --port ${url.port}` : ` RUNDIFF_PORT=${url.port}`;
  return url.port === '' ? `${plain}: ${hostPart}` : `the port goes in ${portName}: ${hostPart}${portPart}`;
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
export function parseToken(raw: string | undefined, name = 'RUNDIFF_TOKEN'): string | null {
  if (raw === undefined || raw === '') return null;
  const hint = 'use printable ASCII without spaces, e.g. the output of `openssl rand -hex 32`';
  if (raw.trim() === '')
    throw new AppError('invalid_input', `${name} is only whitespace, so no client could send it`, { hint });
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
      `${name} contains ${what} at position ${i + 1}, which an "Authorization: Bearer" header cannot carry`,
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
    host: parseHost(
      flags.host !== undefined ? '--host' : 'RUNDIFF_HOST',
      String(pick(flags.host, env.RUNDIFF_HOST, '127.0.0.1')),
    ),
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
    edge: Object.freeze(resolveEdgeSettings(flags, env)),
    database: Object.freeze(resolveDatabaseSettings(env)),
  };
  return Object.freeze(config);
}

const EDGE_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** An edge token at least this long: it is all that stands between the internet and the store. */
const MIN_EDGE_TOKEN_CHARS = 16;

/** `name=token` pairs separated by commas or whitespace; names distinct, tokens distinct. */
/** The PostgreSQL pool's bounds from the environment (each unset or empty = its default). */
function resolveDatabaseSettings(env: NodeJS.ProcessEnv): DatabaseSettings {
  const count = (name: string, fallback: number, min: number) => {
    const raw = env[name];
    return raw === undefined || raw === '' ? fallback : parseCount(name, raw, min);
  };
  return {
    maxConnections: count('RUNDIFF_DATABASE_POOL_MAX', 10, 1),
    statementTimeoutMs: count('RUNDIFF_DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 100),
    connectTimeoutMs: count('RUNDIFF_DATABASE_CONNECT_TIMEOUT_MS', 10_000, 100),
  };
}

export function parseEdgeTokens(raw: string | undefined): { edge: string; token: string }[] {
  const out: { edge: string; token: string }[] = [];
  for (const pair of (raw ?? '').split(/[,\s]+/).filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    const edge = eq > 0 ? pair.slice(0, eq) : '';
    if (!EDGE_NAME.test(edge))
      throw new AppError(
        'invalid_input',
        `RUNDIFF_EDGE_TOKENS: each entry is name=token with a name of a-z, 0-9, . _ -`,
        {
          hint: 'e.g. RUNDIFF_EDGE_TOKENS=laptop-ana=<token>,ci=<token>',
        },
      );
    const token = parseToken(pair.slice(eq + 1), `RUNDIFF_EDGE_TOKENS (${edge})`);
    if (token === null || token.length < MIN_EDGE_TOKEN_CHARS)
      throw new AppError(
        'invalid_input',
        `RUNDIFF_EDGE_TOKENS: the token of ${edge} is shorter than ${MIN_EDGE_TOKEN_CHARS} characters`,
        {
          hint: 'use e.g. the output of `openssl rand -hex 32`',
        },
      );
    if (out.some((o) => o.edge === edge || o.token === token))
      throw new AppError('invalid_input', `RUNDIFF_EDGE_TOKENS: ${edge} appears twice or shares a token`);
    out.push({ edge, token });
  }
  return out;
}

/** Edge settings' defaults (RUNDIFF_EDGE_MAX_BATCH_BYTES, RUNDIFF_UPSTREAM_RETRY_MAX_MS). */
export const EDGE_DEFAULTS = Object.freeze({ maxBatchBytes: 64 * 1024 * 1024, retryMaxMs: 30_000 });

function resolveEdgeSettings(flags: ConfigFlags, env: Env): EdgeSettings {
  const upstreamRaw = pick(flags.upstream, env.RUNDIFF_UPSTREAM, undefined);
  let upstream: string | null = null;
  if (upstreamRaw !== undefined) {
    let url: URL;
    try {
      url = new URL(String(upstreamRaw));
    } catch {
      throw new AppError(
        'invalid_input',
        `--upstream / RUNDIFF_UPSTREAM must be a URL, got ${JSON.stringify(upstreamRaw)}`,
      );
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '')
      throw new AppError('invalid_input', '--upstream / RUNDIFF_UPSTREAM must be an http(s) URL without credentials', {
        hint: 'the token goes in RUNDIFF_UPSTREAM_TOKEN',
      });
    upstream = url.origin + url.pathname.replace(/\/+$/, '');
  }
  const upstreamToken = parseToken(
    pick(flags.upstreamToken, env.RUNDIFF_UPSTREAM_TOKEN, undefined) as string | undefined,
    'RUNDIFF_UPSTREAM_TOKEN',
  );
  if (upstream !== null && upstreamToken === null)
    throw new AppError('invalid_input', '--upstream needs the token the centre gave this edge', {
      hint: 'set RUNDIFF_UPSTREAM_TOKEN (or --upstream-token)',
    });
  if (upstream !== null && upstreamToken !== null && upstreamToken.length < MIN_EDGE_TOKEN_CHARS)
    // A centre accepts no shorter edge token: this edge would be refused at every batch.
    throw new AppError(
      'invalid_input',
      `RUNDIFF_UPSTREAM_TOKEN must be at least ${MIN_EDGE_TOKEN_CHARS} characters (a centre accepts no shorter edge token)`,
    );
  const maxRaw = env.RUNDIFF_EDGE_MAX_BATCH_BYTES;
  const retryRaw = env.RUNDIFF_UPSTREAM_RETRY_MAX_MS;
  return {
    upstream,
    upstreamToken: upstream === null ? null : upstreamToken,
    acceptedEdges: parseEdgeTokens(env.RUNDIFF_EDGE_TOKENS),
    maxBatchBytes:
      maxRaw === undefined || maxRaw === ''
        ? EDGE_DEFAULTS.maxBatchBytes
        : parseCount('RUNDIFF_EDGE_MAX_BATCH_BYTES', maxRaw, 1024),
    retryMaxMs:
      retryRaw === undefined || retryRaw === ''
        ? EDGE_DEFAULTS.retryMaxMs
        : parseCount('RUNDIFF_UPSTREAM_RETRY_MAX_MS', retryRaw, 100),
  };
}
