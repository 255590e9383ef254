import { DEFAULT_LIMITS, LIMIT_ENV, type Limits } from '../../shared/index.ts';
import { limitFlagName, resolveConfig, type ConfigFlags } from '../config.ts';
import { AppError } from '../errors.ts';
import { assertSafeBind, createServer } from '../main.ts';
import { parseArgs, UsageError } from './args.ts';

const LIMIT_KEYS = Object.keys(DEFAULT_LIMITS) as (keyof Limits)[];
const limitFlags = new Map(LIMIT_KEYS.map((k) => [limitFlagName(k).slice(2), k]));

function help(): string {
  const limits = LIMIT_KEYS.map(
    (k) => `  ${limitFlagName(k).padEnd(36)} ${String(DEFAULT_LIMITS[k]).padStart(10)}  (${LIMIT_ENV[k]})`,
  );
  return [
    'usage: rundiff serve [--host H] [--port P] [--db FILE] [--require-commit-approval] [--max-... N]',
    '',
    'Runs the rundiff server: the bridge and history API, socket.io events and the web UI at /.',
    '',
    '  --host H                     bind address (default 127.0.0.1, RUNDIFF_HOST); another address',
    '                               needs RUNDIFF_TOKEN, and clients must use it (or RUNDIFF_ALLOWED_HOSTS)',
    '  --port P                     TCP port (default 7420, RUNDIFF_PORT; 0 = any free port)',
    '  --db FILE                    SQLite database (default RUNDIFF_DB, else ~/.local/share/rundiff/rundiff.db)',
    '  --require-commit-approval    git_commit waits for a person to approve it in the web UI',
    '',
    'Limits (flag, default, environment variable):',
    ...limits,
    '',
    'Stop with Ctrl-C (SIGINT) or SIGTERM.',
    '',
  ].join('\n');
}

const say = (line: string) => process.stderr.write(`${line}\n`);

/** `rundiff serve`: prints the URL on stderr and serves until SIGINT/SIGTERM; returns the exit code. */
export async function run(argv: string[]): Promise<number> {
  let flags: ConfigFlags;
  try {
    const args = parseArgs(argv, {
      values: ['host', 'port', 'db', ...limitFlags.keys()],
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
    server = await createServer(config);
  } catch (err) {
    if (err instanceof AppError) {
      say(`rundiff serve: ${err.message}${err.hint ? `\n  ${err.hint}` : ''}`);
      return 1;
    }
    throw err;
  }
  say(`rundiff: serving on ${server.url} (database ${config.dbPath})`);
  if (config.token) say('rundiff: a token is required (RUNDIFF_TOKEN)');

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  say(`rundiff: ${signal}, closing`);
  await server.close();
  return 0;
}
