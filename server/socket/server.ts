import type { Server as HttpServer } from 'node:http';
import { Server, type Socket } from 'socket.io';
import type { Ack, ClientToServerEvents, ServerEventName, ServerToClientEvents } from '../../shared/index.ts';
import {
  bearerToken,
  checkHostAndOrigin,
  isValidId,
  tokenMatches,
  unauthorized,
  type SecurityPolicy,
} from '../api/index.ts';
import type { BridgeEmitter, EventPayload } from '../runs/index.ts';

export type IoServer = Server<ClientToServerEvents, ServerToClientEvents>;
type IoSocket = Socket<ClientToServerEvents, ServerToClientEvents>;

/** Room of one session's subscribers; the sessions list has its own room. */
export const sessionRoom = (sessionId: string) => `session:${sessionId}`;
export const SESSIONS_ROOM = 'sessions';

export interface SocketServer {
  io: IoServer;
  /** The bridge's emitter (and the helpers other modules call for their own events). */
  emitter: BridgeEmitter;
  emitToSession<E extends ServerEventName>(sessionId: string, event: E, payload: EventPayload<E>): void;
  emitToSessionsList<E extends ServerEventName>(event: E, payload: EventPayload<E>): void;
  close(): Promise<void>;
}

function reply(ack: unknown, a: Ack): void {
  if (typeof ack === 'function') (ack as (a: Ack) => void)(a);
}

function sessionIdOf(payload: unknown): string | null {
  const id = (payload as { session_id?: unknown } | null)?.session_id;
  return typeof id === 'string' && isValidId(id) ? id : null;
}

const badId: Ack = {
  ok: false,
  error: { code: 'invalid_input', message: 'session_id must be 1-200 printable characters' },
};

function onConnection(socket: IoSocket): void {
  // Subscriptions to ids that do not exist yet are fine: a runtime may create the session later.
  socket.on('session.subscribe', (payload, ack) => {
    const id = sessionIdOf(payload);
    if (!id) return reply(ack, badId);
    void Promise.resolve(socket.join(sessionRoom(id))).then(() => reply(ack, { ok: true }));
  });
  socket.on('session.unsubscribe', (payload, ack) => {
    const id = sessionIdOf(payload);
    if (!id) return reply(ack, badId);
    void Promise.resolve(socket.leave(sessionRoom(id))).then(() => reply(ack, { ok: true }));
  });
  socket.on('sessions.subscribe', (_payload, ack) => {
    void Promise.resolve(socket.join(SESSIONS_ROOM)).then(() => reply(ack, { ok: true }));
  });
}

/**
 * socket.io on the HTTP server. The handshake passes the same Host/Origin checks as REST
 * (`allowRequest`, before any upgrade) and, when a token is set, `auth.token` (or a Bearer header).
 */
export function createSocketServer(http: HttpServer, policy: SecurityPolicy): SocketServer {
  const io: IoServer = new Server<ClientToServerEvents, ServerToClientEvents>(http, {
    serveClient: false,
    // Clients only send tiny subscription messages.
    maxHttpBufferSize: 64 * 1024,
    allowRequest: (req, callback) => {
      const refusal = checkHostAndOrigin(req.headers, policy);
      callback(refusal ? refusal.message : null, refusal === null);
    },
  });
  io.use((socket, next) => {
    const auth = socket.handshake.auth as { token?: unknown } | undefined;
    const presented =
      typeof auth?.token === 'string' ? auth.token : bearerToken(socket.handshake.headers.authorization);
    if (tokenMatches(presented, policy)) return next();
    const err = new Error('unauthorized') as Error & { data?: unknown };
    err.data = unauthorized().toBody();
    next(err);
  });
  io.on('connection', onConnection);

  const emitToSession = <E extends ServerEventName>(sessionId: string, event: E, payload: EventPayload<E>) => {
    (io.to(sessionRoom(sessionId)).emit as (e: string, p: unknown) => boolean)(event, payload);
  };
  const emitToSessionsList = <E extends ServerEventName>(event: E, payload: EventPayload<E>) => {
    (io.to(SESSIONS_ROOM).emit as (e: string, p: unknown) => boolean)(event, payload);
  };
  return {
    io,
    emitter: { toSession: emitToSession, toSessionsList: emitToSessionsList },
    emitToSession,
    emitToSessionsList,
    close: () => new Promise<void>((resolve) => void io.close(() => resolve())),
  };
}
