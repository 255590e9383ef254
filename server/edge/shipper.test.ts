import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openStore, type SqliteStore } from '../store/index.ts';
import { createTempDir } from '../test-support/temp-repo.ts';
import { createShipper, type ShipperTimers } from './shipper.ts';

/** The shipper's pace while the centre is unreachable: real requests to a closed port, timers recorded. */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function outboxWithEntries(): Promise<SqliteStore> {
  const dir = createTempDir('rundiff-shipper-');
  const s = openStore(path.join(dir, 'r.db'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => s.close());
  await s.outbox!.attach();
  await s.sessions.upsert('s1', { title: 't' }, 1);
  return s;
}

/** Timers whose rounds fire at once (no waiting on real time) and whose delays are recorded. */
function recordingTimers(requestTimeoutMs: number) {
  const delays: number[] = [];
  const timers: ShipperTimers = {
    setTimeout(fn, ms) {
      // The per-request time limit is left pending (cleared when the request ends).
      if (ms === requestTimeoutMs) return { pending: true };
      delays.push(ms);
      return setImmediate(fn);
    },
    clearTimeout(h) {
      if (h && typeof h === 'object' && 'pending' in h) return;
      clearImmediate(h as NodeJS.Immediate);
    },
  };
  return { delays, timers };
}

describe('the shipper while the centre is unreachable', () => {
  it('waits twice as long after each failure, never longer than the maximum, and keeps the outbox', async () => {
    const store = await outboxWithEntries();
    const { delays, timers } = recordingTimers(60_000);
    const log: string[] = [];
    const shipper = createShipper({
      outbox: store.outbox!,
      upstream: `http://127.0.0.1:${await closedPort()}`,
      token: 'token-0123456789abcdef',
      log: (m) => log.push(m),
      minBackoffMs: 100,
      maxBackoffMs: 1_000,
      requestTimeoutMs: 60_000,
      timers,
    });
    cleanups.push(() => shipper.stop());
    shipper.start();
    await vi.waitFor(() => expect(delays.length).toBeGreaterThanOrEqual(8), { timeout: 20_000, interval: 5 });
    await shipper.stop();
    // The first round at once, then 100, 200, 400, 800 and the cap from there on.
    expect(delays.slice(0, 8)).toEqual([0, 100, 200, 400, 800, 1_000, 1_000, 1_000]);
    const status = await shipper.status();
    expect(status.pending_entries).toBe(1);
    expect(status.last_error).toMatch(/unreachable \(ECONNREFUSED\)/);
    // Said once, not at every try.
    expect(log.filter((l) => l.includes('unreachable'))).toHaveLength(1);
  });

  it('looks at an empty outbox at its idle pace and sends nothing', async () => {
    const store = await outboxWithEntries();
    await store.outbox!.acknowledge((await store.outbox!.read('s1', { maxEntries: 10, maxBytes: 1 << 20 })).seqs, []);
    const { delays, timers } = recordingTimers(60_000);
    const shipper = createShipper({
      outbox: store.outbox!,
      upstream: `http://127.0.0.1:${await closedPort()}`,
      token: 'token-0123456789abcdef',
      log: () => {},
      idleMs: 250,
      timers,
    });
    cleanups.push(() => shipper.stop());
    shipper.start();
    await vi.waitFor(() => expect(delays.length).toBeGreaterThanOrEqual(3), { timeout: 20_000, interval: 5 });
    await shipper.stop();
    expect(delays.slice(0, 3)).toEqual([0, 250, 250]);
    expect((await shipper.status()).last_error).toBeNull();
  });
});

/** A shipper, started, whose outbox holds a batch of about 900 KB for `upstream`. */
async function largeBatchTo(upstream: string, log: string[], now?: () => number) {
  const store = await outboxWithEntries();
  await store.messages.insert({
    session_id: 's1',
    id: 'm1',
    role: 'user',
    content: 'x'.repeat(900_000),
    run_id: null,
    tool_call_id: null,
    created_at: 1,
  });
  const shipper = createShipper({
    outbox: store.outbox!,
    upstream,
    token: 'token-0123456789abcdef',
    log: (m) => log.push(m),
    ...(now ? { now } : {}),
    minBackoffMs: 10,
    maxBackoffMs: 20,
  });
  cleanups.push(() => shipper.stop());
  shipper.start();
  return shipper;
}

/** A TCP peer that takes the connection, then resets it once the request starts arriving (no answer). */
async function cuttingPeer(): Promise<{ url: string; tries: () => number }> {
  let tries = 0;
  const srv = net.createServer((sock) =>
    sock.once('data', () => {
      tries++;
      sock.resetAndDestroy();
    }),
  );
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  cleanups.push(() => new Promise<void>((r) => srv.close(() => r())));
  return { url: `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`, tries: () => tries };
}

describe('the shipper when the centre cuts a batch', () => {
  it('reports the body as refused or cut (the centre is up), not the centre as unreachable, holds back only that session, and logs it once however often it is tried (then hourly)', async () => {
    const log: string[] = [];
    const peer = await cuttingPeer();
    let skew = 0;
    const shipper = await largeBatchTo(peer.url, log, () => Date.now() + skew);
    await vi.waitFor(() => expect(peer.tries()).toBeGreaterThanOrEqual(6), { timeout: 10_000, interval: 5 });
    // Tried again and again for the same reason: said once.
    expect(log.filter((l) => l.includes('held back'))).toHaveLength(1);
    // An hour later it is still held back: said once more, as a reminder.
    skew = 61 * 60 * 1000;
    const seen = peer.tries();
    await vi.waitFor(() => expect(peer.tries()).toBeGreaterThanOrEqual(seen + 4), { timeout: 10_000, interval: 5 });
    await shipper.stop();
    expect(log.filter((l) => l.includes('held back'))).toHaveLength(2);
    const status = await shipper.status();
    expect(status.last_error).toMatch(/closed the connection while a batch of \d+ bytes was being sent/);
    expect(status.last_error).toMatch(/RUNDIFF_EDGE_MAX_BATCH_BYTES/);
    expect(status.last_error).not.toMatch(/unreachable/);
    expect(log.join('\n')).toMatch(/session "s1" held back/);
  });
});

/**
 * A peer that refuses every batch as too large, one try by an answer (413 with its hint, read after
 * the whole body), the next by resetting the connection mid-body, as a centre does at random.
 */
async function refusingPeer(): Promise<{ url: string; tries: () => number }> {
  let tries = 0;
  const answer = JSON.stringify({
    error: {
      code: 'payload_too_large',
      message: 'the request body is larger than 4096 bytes',
      hint: 'raise RUNDIFF_EDGE_MAX_BATCH_BYTES or send less',
    },
  });
  const srv = net.createServer((sock) => {
    const n = ++tries;
    if (n % 2 === 0) {
      sock.once('data', () => sock.resetAndDestroy());
      return;
    }
    let got = Buffer.alloc(0);
    sock.on('data', (c: Buffer) => {
      got = Buffer.concat([got, c]);
      const head = got.indexOf('\r\n\r\n');
      const length = Number(/content-length: *(\d+)/i.exec(got.subarray(0, head).toString())?.[1] ?? 0);
      if (head < 0 || got.length < head + 4 + length) return;
      sock.end(
        `HTTP/1.1 413 Payload Too Large\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(answer)}\r\nconnection: close\r\n\r\n${answer}`,
      );
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  cleanups.push(() => new Promise<void>((r) => srv.close(() => r())));
  return { url: `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`, tries: () => tries };
}

describe('the shipper when the centre refuses a batch as too large', () => {
  it('reports the centre`s hint, and logs the held-back session once whether the refusal was read or the connection cut', async () => {
    const log: string[] = [];
    const peer = await refusingPeer();
    const errors = new Set<string>();
    const shipper = await largeBatchTo(peer.url, log);
    await vi.waitFor(
      async () => {
        const e = (await shipper.status()).last_error;
        if (e) errors.add(e.includes('answered 413') ? 'answered' : e.includes('closed the connection') ? 'cut' : e);
        expect(peer.tries()).toBeGreaterThanOrEqual(8);
      },
      { timeout: 15_000, interval: 2 },
    );
    await shipper.stop();
    // Both ways of refusing were met, and told as one condition.
    expect([...errors].sort()).toEqual(['answered', 'cut']);
    expect(log.filter((l) => l.includes('held back'))).toHaveLength(1);
    expect(log.join('\n')).toMatch(/held back .*RUNDIFF_EDGE_MAX_BATCH_BYTES/);
  });
});
