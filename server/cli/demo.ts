import { resolveConfig } from '../config.ts';
import { playDemo } from '../demo/index.ts';
import { parseArgs, UsageError } from './args.ts';
import { connectServer, ServerNeedsToken } from './bridge-client.ts';
import { defaultServerUrl } from './run-target.ts';

const HELP = `usage: rundiff demo [--server URL] [--pause-ms N]

Plays a scripted agent session against a fresh temporary git workspace through a running server's
bridge (start one with 'npm start'), so every kind of change row and run state appears in the web UI.

  --server URL    the rundiff server (default http://$RUNDIFF_HOST:$RUNDIFF_PORT, http://127.0.0.1:7420)
  --pause-ms N    pause between steps, to watch the timeline update live (default 700)
`;

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs(argv, { values: ['server', 'pause-ms'], booleans: ['help'] });
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`rundiff demo: ${err.message}\n\n${HELP}`);
      return 2;
    }
    throw err;
  }
  if (args.booleans.has('help')) {
    process.stdout.write(HELP);
    return 0;
  }
  const config = resolveConfig();
  const server = args.values.server ?? defaultServerUrl(config);
  const pauseMs = args.values['pause-ms'] === undefined ? 700 : Number(args.values['pause-ms']);
  if (!Number.isFinite(pauseMs) || pauseMs < 0) {
    process.stderr.write('rundiff demo: --pause-ms must be a number >= 0\n');
    return 2;
  }
  let client;
  try {
    client = await connectServer(server, config.token);
  } catch (err) {
    if (err instanceof ServerNeedsToken) {
      process.stderr.write(`rundiff demo: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (!client) {
    process.stderr.write(`rundiff demo: no server at ${server}; start one with 'npm start' first\n`);
    return 1;
  }
  const result = await playDemo({
    send: (e) => client.send(e),
    pauseMs,
    onSession: (id) => process.stderr.write(`rundiff demo: open ${server}/sessions/${encodeURIComponent(id)}\n`),
    log: (line) => process.stderr.write(`  ${line}\n`),
  });
  process.stderr.write(`rundiff demo: done (workspace ${result.workspace})\n`);
  return 0;
}
