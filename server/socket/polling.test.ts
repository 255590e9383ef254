import { afterEach, describe, expect, it } from 'vitest';
import { io as connect } from 'socket.io-client';
import { startTestServer } from '../test-support/server-harness.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('socket.io transports', () => {
  it('a long-polling client (no websocket) subscribes and receives events without server errors', async () => {
    const logged: string[] = [];
    const t = await startTestServer({ log: (m) => logged.push(m) });
    cleanups.push(() => t.close());
    const uncaught: unknown[] = [];
    const onErr = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onErr);
    cleanups.push(() => void process.off('uncaughtException', onErr));
    const client = connect(t.server.url, { transports: ['polling'], upgrade: false });
    cleanups.push(() => void client.close());
    const ack = await client.timeout(5_000).emitWithAck('session.subscribe', { session_id: 'poll' });
    expect(ack).toEqual({ ok: true });
    const got = new Promise((resolve) => client.on('message.created', resolve));
    const posted = await t.post({ type: 'message', session_id: 'poll', role: 'user', content: 'hi' });
    expect(posted.status).toBe(200);
    expect(await got).toMatchObject({ session_id: 'poll', message: { content: 'hi' } });
    expect(uncaught).toEqual([]);
    expect(logged.join('\n')).not.toMatch(/HEADERS_SENT/);
  });
});
