/**
 * The load generator of the session-detail benchmark, in a process of its own. It sends GETs at a
 * fixed rate (open loop) over keep-alive connections, whatever the answers' pace: a request's
 * latency is measured from the moment the schedule says it should have been sent, so a slow answer
 * that holds up later requests (waiting for a free connection, or a late timer here) counts against
 * those requests too, instead of silently lowering the rate (coordinated omission). Each answer must
 * be 200, gzip, and complete (as many bytes as its Content-Length); every tenth is also decompressed
 * (its CRC checked) and parsed, and must hold the session's changes. Checking fewer in full keeps
 * this process's own CPU (it shares the two cores with the server) well below the server's.
 *
 * Usage (forked with an IPC channel): `node bin/tsx.js bench/detail-load-gen.ts URL RATE DURATION_S SOCKETS`
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

export interface LoadResult {
  /** Requests scheduled in the measured window and answered (or failed). */
  sent: number;
  ok: number;
  errors: number;
  /** The first few distinct error messages. */
  errorSamples: string[];
  /** Latencies from the scheduled send time to the last body byte (ms), sorted. */
  latenciesMs: number[];
  /** Requests that waited for a free connection or a late timer before going out. */
  queued: number;
  /** Size of one answer as sent (gzip) and decoded (KiB). */
  gzipKiB: number;
  jsonKiB: number;
}

const gunzip = promisify(zlib.gunzip);

interface Answer {
  status: number;
  encoding: string | undefined;
  declared: number;
  body: Buffer;
}

function get(agent: http.Agent, url: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers: { 'accept-encoding': 'gzip, deflate, br' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            encoding: res.headers['content-encoding'],
            declared: Number(res.headers['content-length'] ?? NaN),
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

export async function runLoad(url: string, rate: number, durationS: number, sockets: number): Promise<LoadResult> {
  // Connections taken in turn (fifo), as a browser spreads requests over its few: with the default
  // (lifo) the spare ones sat idle until the server closed them after its keep-alive timeout, and a
  // request sent on one just as that close arrived failed (ECONNRESET) where a browser retries it.
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets, scheduling: 'fifo' });
  const result: LoadResult = {
    sent: 0,
    ok: 0,
    errors: 0,
    errorSamples: [],
    latenciesMs: [],
    queued: 0,
    gzipKiB: 0,
    jsonKiB: 0,
  };
  const fail = (message: string) => {
    result.errors++;
    if (result.errorSamples.length < 5 && !result.errorSamples.includes(message)) result.errorSamples.push(message);
  };
  let inFlight = 0;
  const pending: Promise<void>[] = [];

  async function one(index: number, due: number, measured: boolean): Promise<void> {
    if (inFlight >= sockets) result.queued += measured ? 1 : 0;
    inFlight++;
    try {
      const res = await get(agent, url);
      const end = performance.now();
      if (res.status !== 200) return fail(`status ${res.status}`);
      if (res.encoding !== 'gzip') return fail(`content-encoding ${String(res.encoding)}`);
      if (res.body.length !== res.declared) return fail(`${res.body.length} bytes of ${res.declared}`);
      result.gzipKiB = res.body.length / 1024;
      if (index % 10 === 0) {
        const json = await gunzip(res.body);
        result.jsonKiB = json.length / 1024;
        const doc = JSON.parse(json.toString('utf8')) as { changes?: unknown[] };
        if (!Array.isArray(doc.changes) || doc.changes.length === 0) return fail('answer without changes');
      }
      if (measured) {
        result.ok++;
        result.latenciesMs.push(end - due);
      }
    } catch (e) {
      fail(e instanceof Error ? e.message : String(e));
    } finally {
      inFlight--;
    }
  }

  // One warm-up second (connections opened, caches filled), then the measured window.
  const warmup = rate;
  const total = warmup + Math.round(rate * durationS);
  const t0 = performance.now();
  const dueAt = (i: number) => t0 + (i * 1000) / rate;
  let next = 0;
  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now();
      while (next < total && dueAt(next) <= now) {
        const measured = next >= warmup;
        if (measured) result.sent++;
        pending.push(one(next, dueAt(next), measured));
        next++;
      }
      if (next >= total) return done();
      setTimeout(tick, Math.max(0, dueAt(next) - performance.now()));
    };
    tick();
  });
  await Promise.all(pending);
  agent.destroy();
  result.latenciesMs.sort((a, b) => a - b);
  return result;
}

if (process.send) {
  const [url, rate, durationS, sockets] = process.argv.slice(2);
  if (!url || !rate || !durationS || !sockets) {
    process.stderr.write('usage: detail-load-gen.ts URL RATE DURATION_S SOCKETS\n');
    process.exit(2);
  }
  const result = await runLoad(url, Number(rate), Number(durationS), Number(sockets));
  process.send(result, () => process.disconnect());
}
