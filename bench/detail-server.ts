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
import http from 'node:http';
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
  /**
   * Session-detail requests as the server saw them, from the parsed request to the last byte handed
   * to the kernel (ms): p50, p99, max. The time before the request was parsed (a busy loop) is in
   * the loop delay instead; the time after, on the wire and in the client, in neither.
   */
  handledP50Ms: number;
  handledP99Ms: number;
  handledMaxMs: number;
  /** The synchronous part of those requests: routing, the answer built or found, the first write (ms). */
  handlerP50Ms: number;
  handlerP99Ms: number;
  handlerMaxMs: number;
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
// Timing the detail requests from outside the app: every request event of every HTTP server here.
const handled: number[] = [];
const handlerSync: number[] = [];
let timing = false;
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (this: http.Server, event: string, ...args: unknown[]) {
  if (event === 'request' && timing) {
    const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
    if (req.method === 'GET' && req.url?.startsWith('/api/hermes/sessions/')) {
      const t = performance.now();
      res.once('finish', () => handled.push(performance.now() - t));
      const result = Reflect.apply(emit, this, [event, ...args]) as boolean;
      handlerSync.push(performance.now() - t);
      return result;
    }
  }
  return Reflect.apply(emit, this, [event, ...args]) as boolean;
} as typeof emit;

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
      handled.length = 0;
      handlerSync.length = 0;
      timing = true;
      window = {
        elu: performance.eventLoopUtilization(),
        cpu: process.cpuUsage(),
        profile: m.profile ? profiler(m.profile) : null,
      };
    } else if (m.type === 'stop' && window) {
      const busy = performance.eventLoopUtilization(window.elu).utilization;
      const cpu = process.cpuUsage(window.cpu);
      delay.disable();
      timing = false;
      const sorted = handled.sort((a, b) => a - b);
      const at = (p: number, xs = sorted) => xs[Math.min(xs.length - 1, Math.ceil(xs.length * p) - 1)] ?? NaN;
      const sync = handlerSync.sort((a, b) => a - b);
      const profileTop = window.profile ? await window.profile.stop() : null;
      window = null;
      send({
        type: 'measured',
        stats: {
          loopDelayP50Ms: delay.percentile(50) / 1e6,
          loopDelayP99Ms: delay.percentile(99) / 1e6,
          loopDelayMaxMs: delay.max / 1e6,
          handledP50Ms: at(0.5),
          handledP99Ms: at(0.99),
          handledMaxMs: sorted[sorted.length - 1] ?? NaN,
          handlerP50Ms: at(0.5, sync),
          handlerP99Ms: at(0.99, sync),
          handlerMaxMs: sync[sync.length - 1] ?? NaN,
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
