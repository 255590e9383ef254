import { io, type Socket } from 'socket.io-client';
import type { ClientToServerEvents, ServerToClientEvents } from '../../../shared/index.ts';
import { currentToken } from '../api/index.ts';

export type AppSocket = Socket<ServerToClientEvents, ClientToServerEvents>;
export type ConnectionState = 'connecting' | 'live' | 'offline' | 'unauthorized';

/**
 * Asked when the handshake is refused for want of a token (`rejected`: a token was sent and refused);
 * resolves once a new token is stored.
 */
export type SocketTokenRequester = (rejected: boolean) => Promise<void>;

let socket: AppSocket | null = null;
let wantSessions = false;
const sessionIds = new Set<string>();
const stateListeners = new Set<(s: ConnectionState) => void>();
const resyncListeners = new Set<() => void>();
let everConnected = false;
let tokenRequester: SocketTokenRequester | null = null;
/** The token sent with the latest handshake, to tell a stale refusal from a wrong token. */
let handshakeToken: string | null = null;

function setState(s: ConnectionState): void {
  for (const fn of stateListeners) fn(s);
}

/**
 * A subscription's ack. socket.io rejects every ack still pending when the connection drops; the
 * next connection subscribes again (`renewSubscriptions`), so a waiter waits for that one.
 */
async function acked(s: AppSocket, send: () => Promise<unknown>): Promise<void> {
  for (;;) {
    try {
      await send();
      return;
    } catch (err) {
      if (s.connected) throw err;
      await new Promise<void>((resolve) => s.once('connect', () => resolve()));
    }
  }
}

/** Sent again on every connection; an ack lost to a dropped connection is renewed by the next. */
const fireAndForget = (p: Promise<unknown>) => void p.catch(() => undefined);

function renewSubscriptions(s: AppSocket): void {
  if (wantSessions) fireAndForget(s.emitWithAck('sessions.subscribe', {}));
  for (const id of sessionIds) fireAndForget(s.emitWithAck('session.subscribe', { session_id: id }));
}

/** The one socket of the app, created on first use; the handshake carries `auth.token` when set. */
export function getSocket(): AppSocket {
  if (socket) return socket;
  const s: AppSocket = io({
    // WebSocket first (one connection, no long-poll requests against a local server); long-polling
    // stays as the fallback where WebSocket is blocked.
    transports: ['websocket', 'polling'],
    // A function, so every (re)connect sends the token current at that moment.
    auth: (cb) => {
      const token = currentToken();
      handshakeToken = token;
      cb(token ? { token } : {});
    },
  });
  s.on('connect', () => {
    setState('live');
    // Emits made before the first connect are buffered by socket.io and go out now. Subscriptions
    // do not survive a reconnect: renew them, then let stores refetch what they missed.
    if (everConnected) {
      renewSubscriptions(s);
      for (const fn of resyncListeners) fn();
    }
    everConnected = true;
  });
  s.on('disconnect', () => setState('offline'));
  s.on('connect_error', (err: Error & { data?: { code?: string } }) => {
    // The server refuses a handshake without the right token with an `unauthorized` error.
    const refused = err.data?.code === 'unauthorized' || /unauthori[sz]ed|token/i.test(err.message);
    if (!refused) {
      setState('offline');
      return;
    }
    // A refused handshake is not retried by socket.io: ask for a token, then connect again.
    setState('unauthorized');
    // The token may have been entered (for a REST request) since this handshake was sent.
    if (currentToken() !== handshakeToken) {
      s.connect();
      return;
    }
    if (tokenRequester) {
      void tokenRequester(handshakeToken !== null).then(() => {
        if (!s.connected) s.connect();
      });
    }
  });
  socket = s;
  return s;
}

export function setSocketTokenRequester(fn: SocketTokenRequester | null): void {
  tokenRequester = fn;
}

/** Reconnect so a newly entered token is used for the handshake. */
export function reconnectSocket(): void {
  if (!socket) return;
  if (socket.connected) socket.disconnect();
  socket.connect();
}

/** Subscribes to the sessions list; resolves once the server acknowledged it (taken effect). */
export async function subscribeSessions(): Promise<void> {
  wantSessions = true;
  const s = getSocket();
  await acked(s, () => s.emitWithAck('sessions.subscribe', {}));
}

/** Subscribes to one session's events; resolves once the server acknowledged it. */
export async function subscribeSession(sessionId: string): Promise<void> {
  sessionIds.add(sessionId);
  const s = getSocket();
  // Not sent again for a session left meanwhile.
  await acked(s, async () => {
    if (sessionIds.has(sessionId)) await s.emitWithAck('session.subscribe', { session_id: sessionId });
  });
}

export function unsubscribeSession(sessionId: string): void {
  if (!sessionIds.delete(sessionId)) return;
  const s = getSocket();
  if (s.connected) fireAndForget(s.emitWithAck('session.unsubscribe', { session_id: sessionId }));
}

/** Calls `fn` whenever the connection state changes; returns the unsubscribe function. */
export function onConnectionState(fn: (s: ConnectionState) => void): () => void {
  stateListeners.add(fn);
  return () => stateListeners.delete(fn);
}

/** Calls `fn` after a reconnect, when events may have been missed and data should be refetched. */
export function onResync(fn: () => void): () => void {
  resyncListeners.add(fn);
  return () => resyncListeners.delete(fn);
}
