import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DEFAULT_LIMITS, LIMIT_ENV, type Limits } from '../../shared/index.ts';
import { EDGE_DEFAULTS, limitFlagName, resolveConfig, type ConfigFlags } from '../config.ts';
import { AppError } from '../errors.ts';
import { redact } from '../store/index.ts';
import { assertSafeBind, createServer } from '../main.ts';
import { parseArgs, UsageError } from './args.ts';

const LIMIT_KEYS = Object.keys(DEFAULT_LIMITS) as (keyof Limits)[];
const limitFlags = new Map(LIMIT_KEYS.map((k) => [limitFlagName(k).slice(2), k]));

function help(): string {
  const limits = LIMIT_KEYS.map(
    (k) => `  ${limitFlagName(k).padEnd(36)} ${String(DEFAULT_LIMITS[k]).padStart(10)}  (${LIMIT_ENV[k]})`,
  );
  return [
    'usage: rundiff serve [--host H] [--port P] [--db FILE | --database-url URL] [--require-commit-approval]',
    '                     [--upstream URL [--upstream-token T]] [--max-... N]',
    '',
    'Runs the rundiff server: the bridge and history API, socket.io events and the web UI at /.',
    '',
    '  --host H                     bind address (default 127.0.0.1, RUNDIFF_HOST); another address',
    '                               needs RUNDIFF_TOKEN, and clients must use it (or RUNDIFF_ALLOWED_HOSTS)',
    '  --port P                     TCP port (default 7420, RUNDIFF_PORT; 0 = any free port)',
    '  --db FILE                    SQLite database (default RUNDIFF_DB, else ~/.local/share/rundiff/rundiff.db)',
    '  --database-url URL           a PostgreSQL store (postgres://...) instead of the SQLite file',
    '                               (RUNDIFF_DATABASE_URL); its pool: RUNDIFF_DATABASE_POOL_MAX (10),',
    '                               RUNDIFF_DATABASE_STATEMENT_TIMEOUT_MS (30000), RUNDIFF_DATABASE_CONNECT_TIMEOUT_MS (10000)',
    '  --require-commit-approval    git_commit waits for a person to approve it in the web UI',
    '  --upstream URL               also send every stored result to the central rundiff at URL (RUNDIFF_UPSTREAM);',
    '                               needs its edge token in RUNDIFF_UPSTREAM_TOKEN (or --upstream-token T)',
    '  --upstream-token T           the token the centre gave this edge (prefer RUNDIFF_UPSTREAM_TOKEN:',
    '                               a flag is visible to other users in the process list)',
    '',
    'Edges and the centre (docs/deployment.md):',
    `  RUNDIFF_UPSTREAM_RETRY_MAX_MS   edge: longest wait between tries while the centre is unreachable`,
    `                                  (default ${EDGE_DEFAULTS.retryMaxMs} ms)`,
    '  RUNDIFF_EDGE_TOKENS             centre: the edges it accepts, name=token,... (default none)',
    `  RUNDIFF_EDGE_MAX_BATCH_BYTES    centre: largest batch body an edge may send`,
    `                                  (default ${EDGE_DEFAULTS.maxBatchBytes} bytes, 64 MiB; 413 past it)`,
    '',
    'Limits (flag, default, environment variable):',
    ...limits,
    '',
    'Stop with Ctrl-C (SIGINT) or SIGTERM.',
    '',
  ].join('\n');
}

const say = (line: string) => process.stderr.write(`${line}\n`);

/** Longest wait for a graceful close after SIGINT/SIGTERM before the process ends anyway. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Tests only: the scan worker module named by RUNDIFF_TEST_SCAN_WORKER, accepted only when it is a
 * file of the project's own test-support folder (so the variable can never load other code).
 */
function testScanWorker(): URL | undefined {
  const named = process.env.RUNDIFF_TEST_SCAN_WORKER;
  if (!named) return undefined;
  try {
    const allowed = fs.realpathSync(fileURLToPath(new URL('../test-support/', import.meta.url)));
    const real = fs.realpathSync(named);
    if (path.dirname(real) === allowed) return pathToFileURL(real);
  } catch {
    // missing file: refused below
  }
  say(`rundiff serve: RUNDIFF_TEST_SCAN_WORKER ignored (not a test-support module)`);
  return undefined;
}

/**
 * Ends the process the way the signal would have without a handler. Needed when a scan thread is
 * blocked in a system call: Node waits for every thread at exit, and that one never returns.
 */
function dieBySignal(signal: NodeJS.Signals): never {
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
  // The default action of SIGINT/SIGTERM ends the process before this line; SIGKILL if it did not.
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
}

/** `rundiff serve`: prints the URL on stderr and serves until SIGINT/SIGTERM; returns the exit code. */
export async function run(argv: string[]): Promise<number> {
  let flags: ConfigFlags;
  try {
    const args = parseArgs(argv, {
      values: ['host', 'port', 'db', 'database-url', 'upstream', 'upstream-token', ...limitFlags.keys()],
      booleans: ['require-commit-approval', 'help'],
    });
    if (args.booleans.has('help')) {
      process.stdout.write(help());
      return 0;
    }
    if (args.positional.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(args.positional[0])}`);
    const limits: Partial<Record<keyof Limits, string>> = {};
    for (const [flag, key] of limitFlags) if (args.values[flag] !== undefined) limits[key] = args.values[flag];
    flags = {
      ...(args.values.host !== undefined ? { host: args.values.host } : {}),
      ...(args.values.port !== undefined ? { port: args.values.port } : {}),
      ...(args.values.db !== undefined ? { db: args.values.db } : {}),
      ...(args.values['database-url'] !== undefined ? { databaseUrl: args.values['database-url'] } : {}),
      ...(args.values.upstream !== undefined ? { upstream: args.values.upstream } : {}),
      ...(args.values['upstream-token'] !== undefined ? { upstreamToken: args.values['upstream-token'] } : {}),
      requireCommitApproval: args.booleans.has('require-commit-approval'),
      limits,
    };
  } catch (err) {
    if (err instanceof UsageError) {
      say(`rundiff serve: ${err.message}\n\n${help()}`);
      return 2;
    }
    throw err;
  }

  let config;
  try {
    config = resolveConfig(flags);
    assertSafeBind(config);
  } catch (err) {
    if (err instanceof AppError) {
      say(`rundiff serve: ${err.message}${err.hint ? `\n  ${err.hint}` : ''}`);
      return 2;
    }
    throw err;
  }

  let server;
  try {
    const scanWorkerUrl = testScanWorker();
    server = await createServer(config, scanWorkerUrl ? { scanWorkerUrl } : {});
  } catch (err) {
    if (err instanceof AppError) {
      say(`rundiff serve: ${err.message}${err.hint ? `\n  ${err.hint}` : ''}`);
      return 1;
    }
    throw err;
  }
  say(
    `rundiff: serving on ${server.url} (database ${config.databaseUrl ? redact(config.databaseUrl) : config.dbPath})`,
  );
  if (config.token) say('rundiff: a token is required (RUNDIFF_TOKEN)');

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  say(`rundiff: ${signal}, closing`);
  // A second signal while closing ends the process at once.
  process.once('SIGINT', () => dieBySignal('SIGINT'));
  process.once('SIGTERM', () => dieBySignal('SIGTERM'));
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    server.close().then(
      () => true,
      (err: unknown) => {
        say(`rundiff: close failed: ${(err as Error).message}`);
        return true;
      },
    ),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_GRACE_MS))),
  ]);
  clearTimeout(timer);
  const stuck = server.engine.stuckWorkers();
  if (!closed || stuck > 0) {
    say(
      closed
        ? `rundiff: ${stuck} scan thread(s) blocked in the file system; ending the process`
        : `rundiff: close did not finish in ${CLOSE_GRACE_MS} ms; ending the process`,
    );
    dieBySignal(signal);
  }
  return 0;
}
