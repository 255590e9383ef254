import pg from 'pg';
import { orderedPostgresAdapter } from './ordered-adapter.ts';
import type { IoServer } from './server.ts';

/**
 * Several replicas on one PostgreSQL database: socket.io's PostgreSQL adapter (LISTEN/NOTIFY) makes
 * an event emitted by one replica reach the subscribers of every replica, in emit order (see
 * `ordered-adapter.ts`). It uses a small pool of
 * its own on the store's URL (one connection listens for good) and the adapter's table for
 * payloads over NOTIFY's 8,000 bytes (a `workspace.diff.completed` of a large change), created at
 * start when missing.
 */

/** Payloads larger than this travel through the table (NOTIFY's own limit is 8,000 bytes). */
const NOTIFY_PAYLOAD_BYTES = 7_500;

export interface Replicas {
  close(): Promise<void>;
}

export async function shareEventsThroughPostgres(
  io: IoServer,
  url: string,
  log: (message: string) => void,
): Promise<Replicas> {
  // Bounded waits: messages to other replicas leave one at a time, so one stuck would hold the rest.
  const pool = new pg.Pool({
    connectionString: url,
    max: 3,
    application_name: 'rundiff-events',
    connectionTimeoutMillis: 10_000,
    statement_timeout: 10_000,
  });
  // A dropped idle connection is replaced; it must not end the process.
  pool.on('error', (err) => log(`events: a PostgreSQL connection failed while idle: ${err.message}`));
  // The adapter keeps one connection out of the pool for LISTEN and listens to its end only: an
  // error on it (a server shutdown or failover ends it with 57P01) would otherwise end the process.
  // The adapter reconnects after the end that follows.
  pool.on('connect', (client) =>
    client.on('error', (err) => log(`events: a PostgreSQL connection failed: ${err.message}; reconnecting`)),
  );
  try {
    await pool.query(`CREATE TABLE IF NOT EXISTS socket_io_attachments (
      id BIGSERIAL UNIQUE,
      created_at TIMESTAMPTZ DEFAULT NOW(),
      payload BYTEA
    )`);
  } catch (err) {
    await pool.end();
    throw err;
  }
  io.adapter(
    orderedPostgresAdapter(pool, {
      channelPrefix: 'socket.io',
      tableName: 'socket_io_attachments',
      payloadThreshold: NOTIFY_PAYLOAD_BYTES,
      cleanupInterval: 30_000,
      errorHandler: (err: Error) => log(`events: sharing with other replicas failed: ${err.message}`),
    }),
  );
  return {
    async close() {
      // The adapter stops listening when socket.io closes; the pool goes after it.
      await pool.end().catch(() => undefined);
    },
  };
}
