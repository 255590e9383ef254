import type { BridgeEvent, CompleteResponse, StartResponse } from '../../shared/index.ts';

/** Where `rundiff run` sends its bridge events: a running server, or straight into the database. */
export interface BridgeClient {
  /** Human words for stderr: the server URL or the database file. */
  readonly target: string;
  send(event: BridgeEvent): Promise<unknown>;
  close(): Promise<void>;
}

export class ServerNeedsToken extends Error {}

/** A client for a reachable server, or null when nothing answers at `url`. */
export async function connectServer(url: string, token: string | null): Promise<BridgeClient | null> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  let health: Response;
  try {
    health = await fetch(new URL('/api/health', url), { headers, signal: AbortSignal.timeout(2_000) });
  } catch {
    return null; // refused, unresolvable or silent: no server
  }
  if (health.status === 401) {
    throw new ServerNeedsToken(`the server at ${url} needs a token: set RUNDIFF_TOKEN`);
  }
  if (!health.ok) return null;
  return {
    target: url,
    async send(event) {
      const res = await fetch(new URL('/api/bridge/events', url), {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(event),
        signal: AbortSignal.timeout(120_000),
      });
      const body = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
      if (!res.ok) {
        const e = body?.error;
        throw new Error(`${event.type} was refused (${res.status}${e ? ` ${e.code}: ${e.message}` : ''})`);
      }
      return body;
    },
    async close() {},
  };
}

/** Records straight into the SQLite database, for when no server is running. */
export async function openDatabaseClient(dbPath: string): Promise<BridgeClient> {
  const { createRundiff } = await import('../index.ts');
  const rundiff = await createRundiff({ db: dbPath });
  return {
    target: dbPath,
    send: (event) => rundiff.handle(event),
    close: () => rundiff.close(),
  };
}

export type { CompleteResponse, StartResponse };
