import { isIP, isIPv6 } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Limits } from '../shared/index.ts';
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
  /** Checkpoints (of git workspaces and plain folders) use a verified folder watcher. Default on. RUNDIFF_WATCH_CHECKPOINTS=0 turns it off */
  watchCheckpoints: boolean;
  /** How long a commit approval waits (ms). Default 120,000. RUNDIFF_APPROVAL_TIMEOUT_MS */
  approvalTimeoutMs: number;
  /** Extra Host header values accepted on a non-loopback bind. RUNDIFF_ALLOWED_HOSTS (comma or colon separated) */
  allowedHosts: string[];
  /** The user's home folder (never tracked itself). */
  homeDir: string;
  /** Slow-client bounds of the HTTP server (ms). */
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

// ---------------------------------------------------------------------------------------------
// The table of settings. Parsing, `rundiff serve --help` and the settings table of
// docs/deployment.md all come from it (`node bin/tsx.js scripts/settings-doc.ts --write`).

/** Where a setting belongs, in the order `--help` and the docs list them. */
export const SETTING_GROUPS = {
  server: 'The server',
  store: 'The store',
  approval: 'Commit approval',
  http: 'Slow clients',
  edge: 'Edges and the centre',
  limits: 'Limits',
} as const;
export type SettingGroup = keyof typeof SETTING_GROUPS;

/** What `parse` is told: the name the value came by (`--port` or `RUNDIFF_PORT`) and the spelling of a fix. */
interface Source {
  name: string;
  /** `RUNDIFF_PORT=7420` or `--port 7420`: how to write `value` where the bad one came from. */
  write(value: string): string;
}

interface Defaults {
  env: Env;
  homeDir: string;
}
/** The defaults that depend on no environment (every one but the database file's). */
const NO_ENV: Defaults = { env: {}, homeDir: os.homedir() };

/** One setting: its environment variable, flag, default, accepted values, unit and one line of doc. */
export interface Setting<T = unknown> {
  env: string;
  /** The `rundiff serve` flag, with the placeholder of its value (none for a switch). */
  flag?: { name: string; value?: string };
  group: SettingGroup;
  /** One line: what it is for (the unit and the accepted values are added from `kind`). */
  doc: string;
  /** What the docs and `--help` show as the default. */
  defaultText: string;
  /** The value when the setting is unset or empty. */
  fallback: (d: Defaults) => T;
  /** Accepted values as the docs and the refusal's hint word them (`whole number >= 1`). */
  accepts: string;
  unit?: Unit;
  parse: (raw: string | number | boolean, from: Source) => T;
}

type Unit = 'ms' | 'bytes' | 'characters' | 'count' | 'days';
const UNIT_TEXT: Record<Unit, string> = {
  ms: 'ms',
  bytes: 'bytes',
  characters: 'characters',
  count: '',
  days: 'days',
};

/** `67108864` -> `64 MiB`; null when the number is not a whole KiB/MiB/GiB. */
function binarySize(n: number): string | null {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const)
    if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  return null;
}

/** `21600000 ms (6 h)`: a default as the docs print it. */
function countText(n: number, unit: Unit): string {
  const base = unit === 'count' ? String(n) : `${n} ${UNIT_TEXT[unit]}`;
  const human =
    unit === 'bytes'
      ? binarySize(n)
      : unit === 'ms' && n >= 60_000 && n % 3_600_000 === 0
        ? `${n / 3_600_000} h`
        : unit === 'ms' && n >= 60_000 && n % 60_000 === 0
          ? `${n / 60_000} min`
          : unit === 'ms' && n >= 1_000 && n % 1_000 === 0
            ? `${n / 1_000} s`
            : null;
  return human ? `${base} (${human})` : base;
}

/** A whole number of `unit` within [min, max], written in decimal digits. */
function count(
  spec: Omit<Setting<number>, 'fallback' | 'accepts' | 'parse' | 'defaultText' | 'unit'> & {
    unit: Unit;
    default: number;
    min: number;
    max?: number;
  },
): Setting<number> {
  const { default: fallback, min, max, ...rest } = spec;
  const accepts = max === undefined ? `a whole number >= ${min}` : `a whole number >= ${min} and <= ${max}`;
  return {
    ...rest,
    defaultText: countText(fallback, spec.unit),
    fallback: () => fallback,
    accepts,
    parse(raw, from) {
      // Digits only: Number() would also take `0x100`, `1e5` or `0b11`.
      const text = String(raw).trim();
      const n = typeof raw === 'number' ? raw : /^\d+$/.test(text) ? Number(text) : NaN;
      if (Number.isSafeInteger(n) && n >= min && (max === undefined || n <= max)) return n;
      const unit = spec.unit === 'count' ? '' : ` (${UNIT_TEXT[spec.unit]})`;
      throw new SettingError(
        `${from.name} must be ${accepts}${unit}, got ${JSON.stringify(String(raw))}`,
        `write decimal digits only, e.g. ${from.write(String(Math.max(fallback, min)))} (the default is ${fallback})`,
      );
    },
  };
}

/** A switch: `1` on, `0` off, empty the default (off unless `on`); a flag without a value turns it on. */
function onOff(
  spec: Omit<Setting<boolean>, 'fallback' | 'accepts' | 'parse' | 'defaultText'> & { on?: boolean },
): Setting<boolean> {
  const { on = false, ...rest } = spec;
  return {
    ...rest,
    defaultText: on ? 'on' : 'off',
    fallback: () => on,
    accepts: '1 (on) or 0 (off)',
    parse(raw, from) {
      if (raw === true || raw === '1') return true;
      if (raw === false || raw === '0') return false;
      throw new SettingError(
        `${from.name} must be 1 or 0, got ${JSON.stringify(String(raw))}`,
        on
          ? `write ${from.write('0')} to turn it off (unset or 1 = on)`
          : `write ${from.write('1')} to turn it on (unset or 0 = off)`,
      );
    },
  };
}

/** Free text of a kind `parse` checks (or takes as it is). */
function text<T>(spec: Setting<T>): Setting<T> {
  return spec;
}

const asText = (raw: string | number | boolean) => String(raw) || null;

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

const TOKEN_HINT = 'use printable ASCII without spaces, e.g. the output of `openssl rand -hex 32`';

/**
 * The token as a client must send it in `Authorization: Bearer <token>`: printable ASCII without
 * spaces. Anything else (only whitespace, a space inside, a control or non-ASCII character) would
 * start a server no client can use, so it is refused here with the reason. The token itself is
 * never echoed.
 */
export function parseToken(raw: string | undefined, name = 'RUNDIFF_TOKEN'): string | null {
  if (raw === undefined || raw === '') return null;
  if (raw.trim() === '') throw new SettingError(`${name} is only whitespace, so no client could send it`, TOKEN_HINT);
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c >= 0x21 && c <= 0x7e) continue;
    const what =
      c === 0x20 || /\s/.test(raw[i]!)
        ? 'whitespace'
        : c < 0x20 || c === 0x7f
          ? 'a control character'
          : 'a non-ASCII character';
    throw new SettingError(
      `${name} contains ${what} at position ${i + 1}, which an "Authorization: Bearer" header cannot carry`,
      TOKEN_HINT,
    );
  }
  return raw;
}

const EDGE_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** An edge token at least this long: it is all that stands between the internet and the store. */
const MIN_EDGE_TOKEN_CHARS = 16;

/** `name=token` pairs separated by commas or whitespace; names distinct, tokens distinct. */
export function parseEdgeTokens(raw: string | undefined): { edge: string; token: string }[] {
  const out: { edge: string; token: string }[] = [];
  for (const pair of (raw ?? '').split(/[,\s]+/).filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    const edge = eq > 0 ? pair.slice(0, eq) : '';
    if (!EDGE_NAME.test(edge))
      throw new SettingError(
        `RUNDIFF_EDGE_TOKENS: each entry is name=token with a name of a-z, 0-9, . _ -`,
        'e.g. RUNDIFF_EDGE_TOKENS=laptop-ana=<token>,ci=<token>',
      );
    const token = parseToken(pair.slice(eq + 1), `RUNDIFF_EDGE_TOKENS (${edge})`);
    if (token === null || token.length < MIN_EDGE_TOKEN_CHARS)
      throw new SettingError(
        `RUNDIFF_EDGE_TOKENS: the token of ${edge} is shorter than ${MIN_EDGE_TOKEN_CHARS} characters`,
        'use e.g. the output of `openssl rand -hex 32`',
      );
    if (out.some((o) => o.edge === edge || o.token === token))
      throw new SettingError(
        `RUNDIFF_EDGE_TOKENS: ${edge} appears twice or shares a token`,
        'give each edge a name and a token of its own',
      );
    out.push({ edge, token });
  }
  return out;
}

/** The centre's URL: http(s), no credentials (the token has a setting of its own), no trailing slash. */
function parseUpstream(raw: string, from: Source): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SettingError(
      `${from.name} must be a URL, got ${JSON.stringify(raw)}`,
      `write the centre's address, e.g. ${from.write('https://rundiff.example:7420')}`,
    );
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '')
    throw new SettingError(
      `${from.name} must be an http(s) URL without credentials`,
      'the token goes in RUNDIFF_UPSTREAM_TOKEN',
    );
  return url.origin + url.pathname.replace(/\/+$/, '');
}

export function defaultDbPath(env: Env = process.env, home = os.homedir()): string {
  const dataHome =
    env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(home, '.local', 'share');
  return path.join(dataHome, 'rundiff', 'rundiff.db');
}

const limit = (
  env: string,
  unit: Unit,
  fallback: number,
  doc: string,
  min = 1,
): Setting<number> & { flag: { name: string; value: string } } => {
  const flag = {
    name:
      '--' +
      env
        .replace(/^RUNDIFF_/, '')
        .toLowerCase()
        .replace(/_/g, '-'),
    value: 'N',
  };
  return { ...count({ env, flag, group: 'limits', doc, unit, default: fallback, min }), flag };
};

/** The bounds of docs/contract.md section 7, each with its `--max-...`-style flag. */
export const LIMIT_SETTINGS: { readonly [K in keyof Limits]: Setting<number> & { flag: { name: string } } } = {
  maxScannedFiles: limit(
    'RUNDIFF_MAX_SCANNED_FILES',
    'count',
    1_000_000,
    'files listed per workspace: a backstop (the scan time and the checkpoint memory are the bounds that scale)',
  ),
  maxChangedFiles: limit('RUNDIFF_MAX_CHANGED_FILES', 'count', 100_000, 'changed files stored as rows per change'),
  maxFilePatchBytes: limit('RUNDIFF_MAX_FILE_PATCH_BYTES', 'bytes', 128 * 1024, 'patch bytes per file (UTF-8)'),
  maxRunPatchBytes: limit('RUNDIFF_MAX_RUN_PATCH_BYTES', 'bytes', 512 * 1024, 'patch bytes per change (UTF-8)'),
  maxOpenedPatchBytes: limit(
    'RUNDIFF_MAX_OPENED_PATCH_BYTES',
    'bytes',
    16 * 1024 * 1024,
    "patch bytes of one file computed from its kept contents when opened, where the stored patch falls short (the change's budget, the per-file bound)",
  ),
  maxSnapshotBytes: limit('RUNDIFF_MAX_SNAPSHOT_BYTES', 'bytes', 512 * 1024, 'content snapshot per file'),
  maxCheckpointMemoryBytes: limit(
    'RUNDIFF_MAX_CHECKPOINT_MEMORY_BYTES',
    'bytes',
    256 * 1024 * 1024,
    'content held by all live checkpoints together',
  ),
  scanTimeoutMs: limit('RUNDIFF_SCAN_TIMEOUT_MS', 'ms', 1_000, 'soft scan time per phase'),
  diffTimeoutMs: limit('RUNDIFF_DIFF_TIMEOUT_MS', 'ms', 100, 'whole per-file diff time budget'),
  checkpointTtlMs: limit(
    'RUNDIFF_CHECKPOINT_TTL_MS',
    'ms',
    6 * 60 * 60 * 1000,
    "checkpoint lifetime since the run's last event",
  ),
  liveFeedMaxWatches: limit(
    'RUNDIFF_LIVE_FEED_MAX_WATCHES',
    'count',
    20_000,
    "folder watches of the live feed over all open runs (at most a quarter of the system's inotify limit)",
  ),
  maxBodyBytes: limit('RUNDIFF_MAX_BODY_BYTES', 'bytes', 2 * 1024 * 1024, 'request body'),
  maxChangesPerSession: limit('RUNDIFF_MAX_CHANGES_PER_SESSION', 'count', 200, 'run-level changes kept per session'),
  retentionDays: limit('RUNDIFF_RETENTION_DAYS', 'days', 30, 'age limit of stored changes'),
  maxContentFileBytes: limit(
    'RUNDIFF_MAX_CONTENT_FILE_BYTES',
    'bytes',
    8 * 1024 * 1024,
    'before/after bytes of one changed file kept for undoing a run (each side)',
  ),
  contentStoreMaxBytes: limit(
    'RUNDIFF_CONTENT_STORE_MAX_BYTES',
    'bytes',
    1024 * 1024 * 1024,
    "all kept file contents together, compressed; the oldest changes' contents go first",
  ),
  searchPatchChars: limit(
    'RUNDIFF_SEARCH_PATCH_CHARS',
    'characters',
    64 * 1024,
    "a changed file's patch text indexed for search, from its start (a byte each for ASCII text)",
  ),
  searchMaxCandidates: limit(
    'RUNDIFF_SEARCH_MAX_CANDIDATES',
    'count',
    5_000,
    "documents holding a query's words one search looks at, newest first (SQLite's bound on a search)",
  ),
  searchTimeoutMs: limit('RUNDIFF_SEARCH_TIMEOUT_MS', 'ms', 2_000, 'time one search may take on PostgreSQL'),
  blameMaxLines: limit(
    'RUNDIFF_BLAME_MAX_LINES',
    'count',
    50_000,
    'lines of the file one blame attributes (past it: 413)',
  ),
  blameMaxChanges: limit(
    'RUNDIFF_BLAME_MAX_CHANGES',
    'count',
    500,
    "changes of the file one blame walks, newest first (older ones are left out: 'truncated')",
  ),
};

/** Every setting but the limits; the keys that have a flag are the keys of `ConfigFlags`. */
const SERVER_SETTINGS = {
  host: text({
    env: 'RUNDIFF_HOST',
    flag: { name: '--host', value: 'H' },
    group: 'server',
    doc: 'bind address; another than loopback needs RUNDIFF_TOKEN, and clients must use it (or RUNDIFF_ALLOWED_HOSTS)',
    defaultText: '127.0.0.1',
    fallback: () => '127.0.0.1',
    accepts: 'a host name or IP address alone',
    parse: (raw, from) => parseHost(from.name, String(raw)),
  }),
  port: count({
    env: 'RUNDIFF_PORT',
    flag: { name: '--port', value: 'P' },
    group: 'server',
    doc: 'TCP port; 0 = any free port',
    unit: 'count',
    default: 7420,
    min: 0,
    max: 65535,
  }),
  token: text<string | null>({
    env: 'RUNDIFF_TOKEN',
    group: 'server',
    doc: 'bearer token every /api/* request and socket handshake must send',
    defaultText: 'none',
    fallback: () => null,
    accepts: 'printable ASCII without spaces',
    parse: (raw, from) => parseToken(String(raw), from.name),
  }),
  allowedHosts: text<string[]>({
    env: 'RUNDIFF_ALLOWED_HOSTS',
    group: 'server',
    doc: 'extra Host header values accepted on a non-loopback bind',
    defaultText: 'none',
    fallback: () => [],
    accepts: 'host names separated by commas or spaces',
    parse: (raw) =>
      String(raw)
        .split(/[,\s]+/)
        .map((h) => h.trim().toLowerCase())
        .filter((h) => h !== ''),
  }),
  workspaceRoots: text<string[] | null>({
    env: 'RUNDIFF_WORKSPACE_ROOTS',
    group: 'server',
    doc: 'only workspaces inside one of these folders are tracked',
    defaultText: 'any allowed folder',
    fallback: () => null,
    accepts: 'folders separated by `:`',
    parse: (raw) => {
      const roots = String(raw)
        .split(':')
        .filter((r) => r !== '')
        .map((r) => path.resolve(r));
      return roots.length > 0 ? roots : null;
    },
  }),
  db: text({
    env: 'RUNDIFF_DB',
    flag: { name: '--db', value: 'FILE' },
    group: 'store',
    doc: 'the SQLite database file (`:memory:` = none kept)',
    defaultText: '$XDG_DATA_HOME/rundiff/rundiff.db, else ~/.local/share/rundiff/rundiff.db',
    fallback: ({ env, homeDir }) => defaultDbPath(env, homeDir),
    accepts: 'a file path',
    parse: (raw) => (String(raw) === ':memory:' ? ':memory:' : path.resolve(String(raw))),
  }),
  databaseUrl: text<string | null>({
    env: 'RUNDIFF_DATABASE_URL',
    flag: { name: '--database-url', value: 'URL' },
    group: 'store',
    doc: 'a PostgreSQL store instead of the SQLite file (docs/deployment.md)',
    defaultText: 'none',
    fallback: () => null,
    accepts: 'a `postgres://` or `postgresql://` URL',
    parse: asText,
  }),
  maxConnections: count({
    env: 'RUNDIFF_DATABASE_POOL_MAX',
    group: 'store',
    doc: 'PostgreSQL connections kept at most, per server process',
    unit: 'count',
    default: 10,
    min: 1,
  }),
  statementTimeoutMs: count({
    env: 'RUNDIFF_DATABASE_STATEMENT_TIMEOUT_MS',
    group: 'store',
    doc: 'a PostgreSQL statement running longer is cancelled and its step fails',
    unit: 'ms',
    default: 30_000,
    min: 100,
  }),
  connectTimeoutMs: count({
    env: 'RUNDIFF_DATABASE_CONNECT_TIMEOUT_MS',
    group: 'store',
    doc: 'waiting longer for a free PostgreSQL connection fails the step',
    unit: 'ms',
    default: 10_000,
    min: 100,
  }),
  watchCheckpoints: onOff({
    env: 'RUNDIFF_WATCH_CHECKPOINTS',
    group: 'server',
    on: true,
    doc: "a workspace's checkpoints look only at the paths a verified folder watcher saw change: git is asked about them, a plain folder's are measured again (0: a whole git status or walk each time)",
  }),
  requireCommitApproval: onOff({
    env: 'RUNDIFF_REQUIRE_COMMIT_APPROVAL',
    flag: { name: '--require-commit-approval' },
    group: 'approval',
    doc: 'git_commit waits for a person to approve it in the web UI',
  }),
  approvalTimeoutMs: count({
    env: 'RUNDIFF_APPROVAL_TIMEOUT_MS',
    group: 'approval',
    doc: 'how long a commit approval waits',
    unit: 'ms',
    default: 120_000,
    min: 1,
  }),
  requestTimeoutMs: count({
    env: 'RUNDIFF_REQUEST_TIMEOUT_MS',
    group: 'http',
    doc: 'the whole request, headers and body, must arrive within this',
    unit: 'ms',
    default: 30_000,
    min: 1,
  }),
  headersTimeoutMs: count({
    env: 'RUNDIFF_HEADERS_TIMEOUT_MS',
    group: 'http',
    doc: 'the request headers must arrive within this (never more than the request timeout)',
    unit: 'ms',
    default: 10_000,
    min: 1,
  }),
  keepAliveTimeoutMs: count({
    env: 'RUNDIFF_KEEP_ALIVE_TIMEOUT_MS',
    group: 'http',
    doc: 'an idle keep-alive connection is closed after this',
    unit: 'ms',
    default: 5_000,
    min: 1,
  }),
  upstream: text<string | null>({
    env: 'RUNDIFF_UPSTREAM',
    flag: { name: '--upstream', value: 'URL' },
    group: 'edge',
    doc: 'edge: also send every stored result to the central rundiff at this URL (needs RUNDIFF_UPSTREAM_TOKEN)',
    defaultText: 'none',
    fallback: () => null,
    accepts: 'an http(s) URL without credentials',
    parse: (raw, from) => parseUpstream(String(raw), from),
  }),
  upstreamToken: text<string | null>({
    env: 'RUNDIFF_UPSTREAM_TOKEN',
    flag: { name: '--upstream-token', value: 'T' },
    group: 'edge',
    doc: 'edge: the token the centre gave this edge (prefer the variable: a flag is visible in the process list)',
    defaultText: 'none',
    fallback: () => null,
    accepts: `printable ASCII without spaces, at least ${MIN_EDGE_TOKEN_CHARS} characters`,
    parse: (raw, from) => parseToken(String(raw), from.name),
  }),
  retryMaxMs: count({
    env: 'RUNDIFF_UPSTREAM_RETRY_MAX_MS',
    group: 'edge',
    doc: 'edge: longest wait between tries while the centre is unreachable',
    unit: 'ms',
    default: 30_000,
    min: 100,
  }),
  acceptedEdges: text<{ edge: string; token: string }[]>({
    env: 'RUNDIFF_EDGE_TOKENS',
    group: 'edge',
    doc: 'centre: the edges it accepts, each by name and token',
    defaultText: 'none',
    fallback: () => [],
    accepts: `name=token pairs separated by commas (tokens of at least ${MIN_EDGE_TOKEN_CHARS} characters)`,
    parse: (raw) => parseEdgeTokens(String(raw)),
  }),
  maxBatchBytes: count({
    env: 'RUNDIFF_EDGE_MAX_BATCH_BYTES',
    group: 'edge',
    doc: 'centre: largest batch body an edge may send (413 past it)',
    unit: 'bytes',
    default: 64 * 1024 * 1024,
    min: 1024,
  }),
} satisfies Record<string, Setting>;

type SettingValues = { [K in keyof typeof SERVER_SETTINGS]: ReturnType<(typeof SERVER_SETTINGS)[K]['parse']> };

/** Every setting, in the order of `--help` and the docs. */
export const SETTINGS: readonly Setting[] = Object.keys(SETTING_GROUPS).flatMap((g) =>
  [...Object.values(SERVER_SETTINGS), ...Object.values(LIMIT_SETTINGS)].filter((s: Setting) => s.group === g),
);

const LIMIT_KEYS = Object.keys(LIMIT_SETTINGS) as (keyof Limits)[];

/** The limits' defaults (docs/contract.md section 7). */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze(
  Object.fromEntries(LIMIT_KEYS.map((k) => [k, LIMIT_SETTINGS[k].fallback(NO_ENV)])) as unknown as Limits,
);

/** Environment variable of each limit. */
export const LIMIT_ENV: Readonly<Record<keyof Limits, string>> = Object.freeze(
  Object.fromEntries(LIMIT_KEYS.map((k) => [k, LIMIT_SETTINGS[k].env])) as Record<keyof Limits, string>,
);

/** `maxScannedFiles` -> `--max-scanned-files`. */
export function limitFlagName(key: keyof Limits): string {
  return LIMIT_SETTINGS[key].flag.name;
}

/** The HTTP server's slow-client bounds by default. */
export const DEFAULT_HTTP_TIMEOUTS: Readonly<HttpTimeouts> = Object.freeze({
  requestTimeoutMs: SERVER_SETTINGS.requestTimeoutMs.fallback(NO_ENV),
  headersTimeoutMs: SERVER_SETTINGS.headersTimeoutMs.fallback(NO_ENV),
  keepAliveTimeoutMs: SERVER_SETTINGS.keepAliveTimeoutMs.fallback(NO_ENV),
});

/** Edge settings' defaults (RUNDIFF_EDGE_MAX_BATCH_BYTES, RUNDIFF_UPSTREAM_RETRY_MAX_MS). */
export const EDGE_DEFAULTS = Object.freeze({
  maxBatchBytes: SERVER_SETTINGS.maxBatchBytes.fallback(NO_ENV),
  retryMaxMs: SERVER_SETTINGS.retryMaxMs.fallback(NO_ENV),
});

/** The flag's value in `flags`: the key of a flagged setting is its key in `ConfigFlags` (limits under `limits`). */
function flagValue(flags: ConfigFlags, key: string): string | number | boolean | undefined {
  if (key in LIMIT_SETTINGS) return flags.limits?.[key as keyof Limits];
  const v = (flags as Record<string, unknown>)[key];
  // A switch given as false is a switch not given: the environment still decides.
  if (v === false || v === undefined) return undefined;
  return v as string | number | boolean;
}

/** One setting's value: its flag, else its environment variable (unset or empty = the default). */
function resolveOne<T>(key: string, s: Setting<T>, flags: ConfigFlags, env: Env, d: Defaults): T {
  const fromFlag = s.flag ? flagValue(flags, key) : undefined;
  if (fromFlag !== undefined) {
    const name = s.flag!.name;
    return s.parse(fromFlag, { name, write: (v) => (s.flag!.value ? `${name} ${v}` : name) });
  }
  const raw = env[s.env];
  if (raw === undefined || raw === '') return s.fallback(d);
  return s.parse(raw, { name: s.env, write: (v) => `${s.env}=${v}` });
}

export function resolveConfig(flags: ConfigFlags = {}, env: Env = process.env): Readonly<Config> {
  const homeDir = env.HOME && path.isAbsolute(env.HOME) ? env.HOME : os.homedir();
  const d: Defaults = { env, homeDir };
  const v = Object.fromEntries(
    Object.entries(SERVER_SETTINGS).map(([k, s]) => [k, resolveOne(k, s as Setting, flags, env, d)]),
  ) as SettingValues;
  const limits = Object.fromEntries(
    LIMIT_KEYS.map((k) => [k, resolveOne(k, LIMIT_SETTINGS[k], flags, env, d)]),
  ) as unknown as Limits;
  const config: Config = {
    host: v.host,
    port: v.port,
    dbPath: v.db,
    databaseUrl: v.databaseUrl,
    token: v.token,
    workspaceRoots: v.workspaceRoots,
    requireCommitApproval: v.requireCommitApproval,
    watchCheckpoints: v.watchCheckpoints,
    approvalTimeoutMs: v.approvalTimeoutMs,
    allowedHosts: v.allowedHosts,
    homeDir,
    http: Object.freeze({
      requestTimeoutMs: v.requestTimeoutMs,
      // Node refuses a headers timeout longer than the request timeout; lowering only the latter is fine.
      headersTimeoutMs: Math.min(v.headersTimeoutMs, v.requestTimeoutMs),
      keepAliveTimeoutMs: v.keepAliveTimeoutMs,
    }),
    limits: Object.freeze(limits),
    edge: Object.freeze(edgeSettings(v)),
    database: Object.freeze({
      maxConnections: v.maxConnections,
      statementTimeoutMs: v.statementTimeoutMs,
      connectTimeoutMs: v.connectTimeoutMs,
    }),
  };
  return Object.freeze(config);
}

/** The edge settings, checked together: an upstream needs a token a centre would accept. */
function edgeSettings(v: SettingValues): EdgeSettings {
  const { upstream, upstreamToken } = v;
  if (upstream !== null && upstreamToken === null)
    throw new SettingError(
      '--upstream needs the token the centre gave this edge',
      'set RUNDIFF_UPSTREAM_TOKEN (or --upstream-token)',
    );
  if (upstream !== null && upstreamToken !== null && upstreamToken.length < MIN_EDGE_TOKEN_CHARS)
    // A centre accepts no shorter edge token: this edge would be refused at every batch.
    throw new SettingError(
      `RUNDIFF_UPSTREAM_TOKEN must be at least ${MIN_EDGE_TOKEN_CHARS} characters (a centre accepts no shorter edge token)`,
      'use the token the centre lists for this edge in its RUNDIFF_EDGE_TOKENS',
    );
  return {
    upstream,
    upstreamToken: upstream === null ? null : upstreamToken,
    acceptedEdges: v.acceptedEdges,
    maxBatchBytes: v.maxBatchBytes,
    retryMaxMs: v.retryMaxMs,
  };
}

// ---------------------------------------------------------------------------------------------
// What the table says, for people: `rundiff serve --help` and the docs' settings table.

/** `  --port P, RUNDIFF_PORT` and the doc line under it, per group: the settings part of `--help`. */
export function settingsHelp(): string[] {
  const out: string[] = [];
  for (const [g, title] of Object.entries(SETTING_GROUPS)) {
    out.push('', `${title}:`);
    for (const s of SETTINGS.filter((x) => x.group === g)) {
      const flag = s.flag ? `${s.flag.name}${s.flag.value ? ` ${s.flag.value}` : ''}, ` : '';
      out.push(`  ${flag}${s.env}`, `      ${s.doc}`, `      default ${s.defaultText}; ${s.accepts}`);
    }
  }
  return out;
}

const code = (t: string) => `\`${t}\``;
const cell = (t: string) => t.replace(/\|/g, '\\|');

/** The settings table of docs/deployment.md, as markdown (before formatting). */
export function settingsMarkdown(): string {
  const rows = SETTINGS.map((s) =>
    [
      SETTING_GROUPS[s.group].toLowerCase(),
      code(s.env),
      s.flag ? code(s.flag.name + (s.flag.value ? ` ${s.flag.value}` : '')) : '',
      cell(s.defaultText),
      cell(s.accepts + (s.unit && s.unit !== 'count' ? `, ${UNIT_TEXT[s.unit]}` : '')),
      cell(s.doc),
    ].join(' | '),
  );
  return [
    '| part | variable | flag | default | accepts | what it is for |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r} |`),
    '',
  ].join('\n');
}
