import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import { runChangeId, type CompleteResponse } from '../../shared/index.ts';
import { resolveConfig } from '../config.ts';
import { parseArgs, UsageError } from './args.ts';
import { connectServer, openDatabaseClient, ServerNeedsToken, type BridgeClient } from './bridge-client.ts';
import { outcomeLine, summaryLines, withAllFiles } from './run-summary.ts';
import { quotePath } from './quote-path.ts';
import { defaultServerUrl, OVERLAP_LINE, parseServerUrl, sessionPageUrl, trackedFolder } from './run-target.ts';

const HELP = `usage: rundiff run [--server URL] [--session ID] [--title T] [--workspace DIR] [--db FILE] -- CMD [ARGS...]

Runs CMD as one tracked run: rundiff checkpoints the workspace, runs CMD with your terminal
(stdin/stdout/stderr are CMD's), then prints on stderr which files CMD changed. It exits with CMD's
exit code; Ctrl-C and SIGTERM are passed to CMD.

  --server URL     the rundiff server, with its scheme (default http://$RUNDIFF_HOST:$RUNDIFF_PORT,
                   http://127.0.0.1:7420); sends RUNDIFF_TOKEN when set. With no server reachable,
                   records into the database. Prints the session's page when a server records it.
  --session ID     add the run to this session (default: a new session); its title is kept
  --title T        the run's title (default: none; the timeline shows the command line). A new
                   session (or one without a title) is named by it too, else by the command line
  --workspace DIR  the folder to track (default: the current folder, or the top level of the git
                   repository it is in)
  --db FILE        the database used when no server is reachable (default: RUNDIFF_DB or
                   ~/.local/share/rundiff/rundiff.db)
`;

function quoteArg(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

/** A run's title, as the bridge takes it. */
const MAX_TITLE_CHARS = 500;

const say = (line: string) => process.stderr.write(`${line}\n`);

/** The session's title; a failed read is reported and treated as "no title known" (kept untouched). */
async function titleOf(client: BridgeClient, sessionId: string): Promise<string | null | undefined> {
  try {
    return await client.sessionTitle(sessionId);
  } catch (err) {
    say(`rundiff: could not read the session's title, leaving it as it is: ${(err as Error).message}`);
    return '';
  }
}

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs(
      argv,
      { values: ['server', 'session', 'title', 'workspace', 'db'], booleans: ['help'] },
      { stopAtPositional: true },
    );
  } catch (err) {
    if (err instanceof UsageError) {
      say(`rundiff run: ${err.message}\n\n${HELP}`);
      return 2;
    }
    throw err;
  }
  if (args.booleans.has('help')) {
    process.stdout.write(HELP);
    return 0;
  }
  const command = args.positional;
  if (command.length === 0) {
    say(`rundiff run: no command given\n\n${HELP}`);
    return 2;
  }
  if (args.values.title !== undefined && [...args.values.title].length > MAX_TITLE_CHARS) {
    say(`rundiff run: --title must be at most ${MAX_TITLE_CHARS} characters`);
    return 2;
  }
  const config = resolveConfig({ db: args.values.db });
  let serverUrl: string;
  try {
    serverUrl = args.values.server !== undefined ? parseServerUrl(args.values.server) : defaultServerUrl(config);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    say(`rundiff run: ${err.message}`);
    return 2;
  }
  const tracked = await trackedFolder(args.values.workspace ?? process.cwd(), args.values.workspace !== undefined);
  const workspace = tracked.workspace;
  const sessionId = args.values.session ?? randomUUID();
  const runId = randomUUID();
  const commandLine = command.map(quoteArg).join(' ');

  let client: BridgeClient | null;
  try {
    client = await connectServer(serverUrl, config.token);
  } catch (err) {
    if (err instanceof ServerNeedsToken) {
      say(`rundiff: ${err.message}`);
      return 2;
    }
    throw err;
  }
  say(`rundiff: session ${sessionId}`);
  if (client) say(`rundiff: ${sessionPageUrl(serverUrl, sessionId)}`);
  else {
    say(`rundiff: no server at ${serverUrl}; recording into ${quotePath(config.dbPath)}`);
    client = await openDatabaseClient(config.dbPath);
  }
  if (tracked.note) say(`rundiff: ${tracked.note}`);

  // Tracking never stops the command: a failed event is reported and the command still runs.
  let trackingOk = true;
  const send = async <T>(event: Parameters<BridgeClient['send']>[0]): Promise<T | null> => {
    try {
      return (await client.send(event)) as T;
    } catch (err) {
      trackingOk = false;
      say(`rundiff: could not record ${event.type}: ${(err as Error).message}`);
      return null;
    }
  };

  // `--title` names the run. An existing session keeps its title: the run's title (or the command
  // line) names a new session, or one that has none, only.
  const runTitle = args.values.title;
  let sessionTitle: string | undefined;
  const existing = args.values.session === undefined ? undefined : await titleOf(client, sessionId);
  if (existing === undefined || existing === null) sessionTitle = (runTitle ?? commandLine).slice(0, 500);
  await send({
    type: 'session.upsert',
    session_id: sessionId,
    workspace,
    ...(sessionTitle === undefined ? {} : { title: sessionTitle }),
  });
  await send({ type: 'message', session_id: sessionId, role: 'user', content: commandLine, run_id: runId });
  await send({
    type: 'run.started',
    session_id: sessionId,
    run_id: runId,
    workspace,
    source: 'run',
    ...(runTitle === undefined ? {} : { title: runTitle }),
  });

  const started = Date.now();
  let forwarded: NodeJS.Signals | null = null;
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; spawnError?: string }>(
    (resolve) => {
      // The handlers are in place before the command starts: a signal sent as soon as the command
      // runs (it may say so at once) reaches it instead of ending rundiff with the run left open.
      // Node runs them from its event loop, so after `child` is assigned.
      const forward = (sig: NodeJS.Signals) => {
        forwarded = sig;
        if (child.exitCode === null && child.signalCode === null) child.kill(sig);
      };
      const onInt = () => forward('SIGINT');
      const onTerm = () => forward('SIGTERM');
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
      const unlisten = () => {
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
      };
      let child: ReturnType<typeof spawn>;
      try {
        child = spawn(command[0]!, command.slice(1), { stdio: 'inherit', shell: false });
      } catch (err) {
        unlisten();
        throw err;
      }
      const done = (r: { code: number | null; signal: NodeJS.Signals | null; spawnError?: string }) => {
        unlisten();
        resolve(r);
      };
      child.on('error', (err: NodeJS.ErrnoException) => {
        done({
          code: err.code === 'ENOENT' ? 127 : 126,
          signal: null,
          spawnError: `${command[0]}: ${err.code === 'ENOENT' ? 'command not found' : err.message}`,
        });
      });
      child.on('exit', (code, signal) => done({ code, signal }));
    },
  );
  const elapsed = Date.now() - started;
  if (exit.spawnError) say(`rundiff: ${exit.spawnError}`);

  const signal = forwarded ?? exit.signal;
  const outcome = exit.spawnError ?? outcomeLine({ code: exit.code, signal }, elapsed);
  await send({ type: 'message', session_id: sessionId, role: 'assistant', content: outcome, run_id: runId });
  const ok = !signal && exit.code === 0;
  const completion = await send<CompleteResponse>(
    ok
      ? { type: 'run.completed', session_id: sessionId, run_id: runId }
      : { type: 'run.failed', session_id: sessionId, run_id: runId, error: outcome },
  );
  let all = completion;
  if (completion) {
    all = await withAllFiles(completion, (cursor) => client.filesAfter(sessionId, completion.change_id, cursor)).catch(
      (err: unknown) => {
        say(`rundiff: could not read every changed path: ${(err as Error).message}`);
        return completion;
      },
    );
  }
  await client.close();

  if (all) {
    for (const line of summaryLines(all)) say(line);
    if (all.tracking && all.overlapping) say(OVERLAP_LINE);
  } else if (trackingOk) say(`rundiff: no change summary for ${runChangeId(runId)}`);

  if (signal) return 128 + (osConstants.signals[signal] ?? 1);
  return exit.code ?? 1;
}
