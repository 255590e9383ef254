import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolveConfig, settingsHelp, SETTINGS, type ConfigFlags } from '../config.ts';
import { AppError } from '../errors.ts';
import { redact } from '../store/index.ts';
import { assertSafeBind, createServer } from '../main.ts';
import { parseArgs, UsageError } from './args.ts';
import { agentSetupNotices } from './hooks/setup-notices.ts';

/** The settings `serve` takes as flags, by flag name without `--`, with their key in `ConfigFlags`. */
const FLAGGED = new Map(
  SETTINGS.flatMap((s) => (s.flag ? [[s.flag.name.slice(2), { setting: s, key: flagKey(s.flag.name) }] as const] : [])),
);

/** `--database-url` -> `databaseUrl`, `--max-scanned-files` -> `maxScannedFiles`. */
function flagKey(flag: string): string {
  return flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function help(): string {
  return [
    'usage: rundiff serve [--host H] [--port P] [--db FILE | --database-url URL] [--require-commit-approval]',
    '                     [--upstream URL [--upstream-token T]] [--max-... N]',
    '',
    'Runs the rundiff server: the bridge and history API, socket.io events and the web UI at /.',
    'Each setting: its flag (if any) and environment variable; a flag wins over the variable.',
    ...settingsHelp(),
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
      values: [...FLAGGED].filter(([, f]) => f.setting.flag?.value !== undefined).map(([name]) => name),
      booleans: [...[...FLAGGED].filter(([, f]) => f.setting.flag?.value === undefined).map(([name]) => name), 'help'],
    });
    if (args.booleans.has('help')) {
      process.stdout.write(help());
      return 0;
    }
    if (args.positional.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(args.positional[0])}`);
    const given: Record<string, string | boolean> = {};
    const limits: Record<string, string> = {};
    for (const [name, { setting, key }] of FLAGGED) {
      const value = setting.flag?.value === undefined ? args.booleans.has(name) || undefined : args.values[name];
      if (value === undefined) continue;
      if (setting.group === 'limits') limits[key] = String(value);
      else given[key] = value;
    }
    flags = { ...given, limits };
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
    const home = config.homeDir;
    server = await createServer(config, {
      ...(scanWorkerUrl ? { scanWorkerUrl } : {}),
      agentNotices: () => agentSetupNotices(home),
    });
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
