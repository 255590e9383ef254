import { FILES_PAGE_MAX, type BridgeEvent, type ChangeFilesPage } from '../../shared/index.ts';

/**
 * A client of the public bridge over HTTP, as an external runtime uses it: `rundiff run`,
 * `rundiff demo` and the server's own demo route all send their events this way.
 */

/** Where bridge events go: a running server, or (in the CLI) straight into the database. */
export interface BridgeClient {
  /** Human words for stderr: the server URL or the database file. */
  readonly target: string;
  send(event: BridgeEvent): Promise<unknown>;
  /** The session's title (null: untitled), or undefined when no such session exists yet. */
  sessionTitle(sessionId: string): Promise<string | null | undefined>;
  /** The stored rows of a change after `cursor` (a `next_file_cursor`); null when the change is unknown. */
  filesAfter(sessionId: string, changeId: string, cursor: string): Promise<ChangeFilesPage | null>;
  close(): Promise<void>;
}

export class ServerNeedsToken extends Error {}

function authHeaders(token: string | null): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  return headers;
}

/** Posts one event to `POST <baseUrl>/api/bridge/events`; a refusal becomes an Error naming its code. */
export function httpBridgeSender(baseUrl: string, token: string | null): (event: BridgeEvent) => Promise<unknown> {
  const headers = { ...authHeaders(token), 'content-type': 'application/json' };
  return async (event) => {
    const res = await fetch(new URL('/api/bridge/events', baseUrl), {
      method: 'POST',
      headers,
      body: JSON.stringify(event),
      signal: AbortSignal.timeout(120_000),
    });
    const body = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
    if (!res.ok) {
      const e = body?.error;
      throw new Error(`${event.type} was refused (${res.status}${e ? ` ${e.code}: ${e.message}` : ''})`);
    }
    return body;
  };
}

/** Pages of a change's rows from the server's REST route. */
export function httpFilesPager(
  baseUrl: string,
  token: string | null,
): (sessionId: string, changeId: string, cursor: string) => Promise<ChangeFilesPage | null> {
  return async (sessionId, changeId, cursor) => {
    const route =
      `/api/hermes/sessions/${encodeURIComponent(sessionId)}/workspace-run-changes/` +
      `${encodeURIComponent(changeId)}/files?after=${encodeURIComponent(cursor)}&limit=${FILES_PAGE_MAX}`;
    const res = await fetch(new URL(route, baseUrl), {
      headers: authHeaders(token),
      signal: AbortSignal.timeout(120_000),
    });
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`the files of ${changeId} were refused (${res.status})`);
    return (await res.json()) as ChangeFilesPage;
  };
}

/** A session's title from the server's REST route (one message, the least the route serves). */
export function httpSessionTitle(
  baseUrl: string,
  token: string | null,
): (sessionId: string) => Promise<string | null | undefined> {
  return async (sessionId) => {
    const route = `/api/hermes/sessions/${encodeURIComponent(sessionId)}?messages_limit=1`;
    const res = await fetch(new URL(route, baseUrl), {
      headers: authHeaders(token),
      signal: AbortSignal.timeout(120_000),
    });
    if (res.status === 404) return undefined;
    if (!res.ok) throw new Error(`the session ${sessionId} could not be read (${res.status})`);
    return ((await res.json()) as { session: { title: string | null } }).session.title;
  };
}

/** A client for a reachable server, or null when nothing answers at `url`. */
export async function connectServer(url: string, token: string | null): Promise<BridgeClient | null> {
  let health: Response;
  try {
    health = await fetch(new URL('/api/health', url), {
      headers: authHeaders(token),
      signal: AbortSignal.timeout(2_000),
    });
  } catch {
    return null; // refused, unresolvable or silent: no server
  }
  if (health.status === 401) {
    throw new ServerNeedsToken(`the server at ${url} needs a token: set RUNDIFF_TOKEN`);
  }
  if (!health.ok) return null;
  return {
    target: url,
    send: httpBridgeSender(url, token),
    sessionTitle: httpSessionTitle(url, token),
    filesAfter: httpFilesPager(url, token),
    close: async () => {},
  };
}
