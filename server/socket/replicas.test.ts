import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { httpBridgeSender } from '../bridge-client/index.ts';
import { createTestDatabase } from '../test-support/postgres.ts';
import { serveProcess } from '../test-support/serve-process.ts';
import { connectClient, type TestClient } from '../test-support/server-harness.ts';
import { createTempDir } from '../test-support/temp-repo.ts';

/**
 * Two `rundiff serve` processes on one PostgreSQL database, a socket.io client on each: an event
 * stored through one replica reaches the subscribers of the other (socket.io's PostgreSQL adapter).
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function replicas(count: number) {
  const db = await createTestDatabase();
  cleanups.push(() => db.drop());
  const dir = createTempDir('rundiff-replicas-');
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const servers = [];
  for (let i = 0; i < count; i++)
    servers.push(
      await serveProcess(
        ['--port', '0', '--db', path.join(dir, `unused-${i}.db`)],
        { RUNDIFF_DATABASE_URL: db.url },
        (stop) => cleanups.push(stop),
      ),
    );
  return { db, servers };
}

async function subscribed(url: string, sessionId: string): Promise<TestClient> {
  const c = await connectClient(url);
  cleanups.push(() => c.close());
  expect(await c.ask('sessions.subscribe', {})).toMatchObject({ ok: true });
  expect(await c.ask('session.subscribe', { session_id: sessionId })).toMatchObject({ ok: true });
  return c;
}

describe('several replicas on one PostgreSQL database', () => {
  it('an event stored through one replica reaches a socket subscribed on the other, small and over the NOTIFY limit', async () => {
    const { db, servers } = await replicas(2);
    const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
    const sessionId = randomUUID();
    const onA = await subscribed(a.url, sessionId);
    const onB = await subscribed(b.url, sessionId);
    const send = httpBridgeSender(a.url, null);
    await send({ type: 'session.upsert', session_id: sessionId, title: 'shared' });
    await send({ type: 'run.started', session_id: sessionId, run_id: 'r1' });
    // A message larger than NOTIFY's 8,000 bytes travels through the adapter's table.
    const big = 'x'.repeat(20_000);
    await send({ type: 'message', session_id: sessionId, role: 'assistant', content: big, run_id: 'r1' });
    await send({ type: 'run.completed', session_id: sessionId, run_id: 'r1' });

    for (const c of [onA, onB]) {
      await c.waitFor('run.completed', 1, 15_000);
      const [created] = await c.waitFor('message.created', 1, 15_000);
      expect((created!.payload as { message: { content: string } }).message.content).toBe(big);
      expect(c.names()).toEqual(expect.arrayContaining(['session.updated', 'run.started']));
    }
    // B serves what A stored (one store), and the adapter's table exists on the database.
    const detail = await fetch(`${b.url}/api/hermes/sessions/${sessionId}`);
    expect(detail.status).toBe(200);
    const pool = new pg.Pool({ connectionString: db.url });
    try {
      const t = await pool.query("SELECT to_regclass('public.socket_io_attachments') AS t");
      expect(t.rows[0].t).toBe('socket_io_attachments');
    } finally {
      await pool.end();
    }
  });

  it('a socket on the other replica gets the events in the order they were emitted, a large one ahead of small ones', async () => {
    const { servers } = await replicas(2);
    const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
    const sessionId = randomUUID();
    const onA = await subscribed(a.url, sessionId);
    const onB = await subscribed(b.url, sessionId);
    const send = httpBridgeSender(a.url, null);
    await send({ type: 'session.upsert', session_id: sessionId, title: 'ordered' });
    await send({ type: 'run.started', session_id: sessionId, run_id: 'r1' });
    // Over NOTIFY's limit: read back from the adapter's table by the receiver, which takes a
    // query's round trip while the small events behind it need none.
    const contents = ['x'.repeat(20_000), 'one', 'two', 'y'.repeat(9_000), 'three'];
    for (const content of contents)
      await send({ type: 'message', session_id: sessionId, role: 'assistant', content, run_id: 'r1' });
    await send({ type: 'run.completed', session_id: sessionId, run_id: 'r1' });
    // A request's events are all emitted before its answer, and each replica hands them on in
    // emit order: once this later request's event reached a socket, every event of the run has.
    const last = 'ordered, all sent';
    await send({ type: 'session.upsert', session_id: sessionId, title: last });
    const allArrived = (c: TestClient) =>
      vi.waitFor(
        () =>
          expect(
            c.events.some(
              (e) =>
                e.event === 'session.updated' && (e.payload as { session: { title: string } }).session.title === last,
            ),
          ).toBe(true),
        { timeout: 15_000, interval: 10 },
      );

    const story = (c: TestClient) =>
      c.events.map((e) =>
        e.event === 'message.created'
          ? `message ${(e.payload as { message: { content: string } }).message.content.slice(0, 5)}`
          : e.event,
      );
    await onA.waitFor('run.completed', 1, 15_000);
    await onB.waitFor('run.completed', 1, 15_000);
    await allArrived(onA);
    await allArrived(onB);
    expect(story(onA)).toContain('message three');
    expect(story(onB)).toEqual(story(onA));
  });

  it('replicas outlive the database ending every connection (a restart, a failover), and events flow again', async () => {
    const { db, servers } = await replicas(2);
    const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
    const sessionId = randomUUID();
    const onB = await subscribed(b.url, sessionId);
    const send = httpBridgeSender(a.url, null);
    await send({ type: 'session.upsert', session_id: sessionId, title: 'before' });
    await onB.waitFor('session.updated', 1, 15_000);

    // What a PostgreSQL shutdown does to each open connection (SQLSTATE 57P01), the listening one
    // included; more times than the events' pool has connections, so a connection not given back
    // would show.
    let n = 0;
    for (let round = 1; round <= 4; round++) {
      const pool = new pg.Pool({ connectionString: db.url });
      try {
        const ended = await pool.query<{ pid: number }>(
          'SELECT pid, pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        );
        expect(ended.rows.length).toBeGreaterThanOrEqual(2);
        // Each replica has handled the end of its connections once its listening one is back: a
        // new connection whose last statement is LISTEN (the adapter reconnects 1-3 s after an end).
        const gone = ended.rows.map((r) => r.pid);
        await vi.waitFor(
          async () => {
            const back = await pool.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %' AND NOT (pid = ANY($1))",
              [gone],
            );
            expect(back.rows[0]!.n).toBeGreaterThanOrEqual(2);
          },
          { timeout: 15_000, interval: 50 },
        );
      } finally {
        await pool.end();
      }
      for (const s of [a, b]) expect((await fetch(`${s.url}/api/health`)).status).toBe(200);
      // The store's pool opens new connections; the listening one comes back within a few seconds.
      const seen = onB.names().filter((e) => e === 'message.created').length;
      await vi.waitFor(
        async () => {
          await send({ type: 'message', session_id: sessionId, role: 'user', content: `after ${++n}` });
          // What this attempt waits for: the message on B (lost if the listener is not back yet).
          await onB.waitFor('message.created', seen + 1, 2_000).catch(() => undefined);
          expect(onB.names().filter((e) => e === 'message.created').length).toBeGreaterThan(seen);
        },
        { timeout: 20_000, interval: 1_000 },
      );
    }
    for (const s of [a, b]) expect(s.stderr()).not.toMatch(/Unhandled|uncaught/i);
  });
});
