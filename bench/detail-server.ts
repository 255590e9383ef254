/**
 * The server of the session-detail load benchmark, in a process of its own: the real
 * `createServer` on an ephemeral port with the database named on the command line. It measures
 * itself between a `start` and a `stop` message from its parent (event-loop delay, event-loop
 * utilisation, CPU, resident size, and optionally a CPU profile of the main thread), so the
 * server's own time can be told apart from the load generator's.
 *
 * Usage (forked with an IPC channel): `node bin/tsx.js bench/detail-server.ts DB_FILE`
 */
import fs from 'node:fs';
import inspector from 'node:inspector';
import os from 'node:os';
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import { resolveConfig } from '../server/config.ts';
import { createServer } from '../server/main.ts';

export type ServerMessage =
  | { type: 'ready'; url: string; rssMiB: number }
  | { type: 'measured'; stats: ServerStats }
  | { type: 'failed'; message: string };

export type ParentMessage = { type: 'start'; profile: string | null } | { type: 'stop' } | { type: 'exit' };

export interface ServerStats {
  /** Event-loop delay over the window (monitorEventLoopDelay, 1 ms resolution): percentiles and max (ms). */
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** Share of the window the main thread was busy (0-1). */
  busy: number;
  /** CPU the server process used over the window, all its threads (ms). */
  cpuMs: number;
  rssMiB: number;
  /** The main thread's top self-time functions when a profile was asked for. */
  profileTop: string | null;
}

const send = (m: ServerMessage) => process.send!(m);

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** The 25 functions with the most self time, with their share of the profile. */
function topSelfTime(profile: CpuProfile): string {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const f = byNode.get(id)!.callFrame;
    const where = f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(server|bench)\//, '$1/');
    const key = `${f.functionName || '(anonymous)'} ${where}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([k, us]) => `${((us / total) * 100).toFixed(1).padStart(5)}% ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`)
    .join('\n');
}

function profiler(file: string) {
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))),
    );
  const started = post('Profiler.enable')
    .then(() => post('Profiler.setSamplingInterval', { interval: 500 }))
    .then(() => post('Profiler.start'));
  return {
    async stop(): Promise<string> {
      await started;
      const { profile } = (await post('Profiler.stop')) as { profile: CpuProfile };
      session.disconnect();
      fs.writeFileSync(file, JSON.stringify(profile));
      return topSelfTime(profile);
    },
  };
}

const dbFile = process.argv[2];
if (!dbFile || !process.send) {
  process.stderr.write('usage: fork bench/detail-server.ts DB_FILE (with an IPC channel)\n');
  process.exit(2);
}
const config = resolveConfig({ port: 0, db: dbFile }, { HOME: os.homedir() });
const server = await createServer(config, { log: () => {} });
const delay = monitorEventLoopDelay({ resolution: 1 });
let window: { elu: EventLoopUtilization; cpu: NodeJS.CpuUsage; profile: ReturnType<typeof profiler> | null } | null =
  null;

process.on('message', (m: ParentMessage) => {
  void (async () => {
    if (m.type === 'start') {
      delay.reset();
      delay.enable();
      window = {
        elu: performance.eventLoopUtilization(),
        cpu: process.cpuUsage(),
        profile: m.profile ? profiler(m.profile) : null,
      };
    } else if (m.type === 'stop' && window) {
      const busy = performance.eventLoopUtilization(window.elu).utilization;
      const cpu = process.cpuUsage(window.cpu);
      delay.disable();
      const profileTop = window.profile ? await window.profile.stop() : null;
      window = null;
      send({
        type: 'measured',
        stats: {
          loopDelayP50Ms: delay.percentile(50) / 1e6,
          loopDelayP99Ms: delay.percentile(99) / 1e6,
          loopDelayMaxMs: delay.max / 1e6,
          busy,
          cpuMs: (cpu.user + cpu.system) / 1000,
          rssMiB: process.memoryUsage().rss / 2 ** 20,
          profileTop,
        },
      });
    } else if (m.type === 'exit') {
      await server.close();
      process.disconnect();
    }
  })().catch((e: unknown) => send({ type: 'failed', message: e instanceof Error ? e.message : String(e) }));
});
send({ type: 'ready', url: server.url, rssMiB: process.memoryUsage().rss / 2 ** 20 });
