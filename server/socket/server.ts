import { ServerResponse, STATUS_CODES, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { Server, type Socket } from 'socket.io';
import type { Ack, ClientToServerEvents, ServerEventName, ServerToClientEvents } from '../../shared/index.ts';
import { bearerToken, checkHostAndOrigin, tokenMatches, unauthorized, type SecurityPolicy } from '../security/index.ts';
import type { AppError } from '../errors.ts';
import { isValidId, type RecorderEmitter, type EventPayload } from '../runs/index.ts';

export type IoServer = Server<ClientToServerEvents, ServerToClientEvents>;
type IoSocket = Socket<ClientToServerEvents, ServerToClientEvents>;

/** Room of one session's subscribers; the sessions list has its own room. */
export const sessionRoom = (sessionId: string) => `session:${sessionId}`;
export const SESSIONS_ROOM = 'sessions';

export interface SocketServer {
  io: IoServer;
  /** The recorder's emitter (and the helpers other modules call for their own events). */
  emitter: RecorderEmitter;
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
 * The Host/Origin refusal as an HTTP answer. A long-polling request has a real response object;
 * for a websocket upgrade engine.io hands over a stand-in, so the answer goes onto the raw socket.
 */
function refuse(req: IncomingMessage, res: ServerResponse, refusal: AppError): void {
  const body = JSON.stringify(refusal.toBody());
  if (res instanceof ServerResponse) {
    res.writeHead(refusal.status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      Connection: 'close',
    });
    res.end(body);
    return;
  }
  const raw = req.socket;
  if (raw.writable)
    raw.write(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? 'Error'}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  raw.destroySoon();
}

/**
 * socket.io on the HTTP server. Every engine.io request (the handshake, each later long-polling
 * GET/POST and the websocket upgrade, which carry only the session id) passes the same Host/Origin
 * checks as REST: a DNS-rebound page that learnt a session id gets no further. The token is
 * checked once, when the client joins the namespace (`auth.token`, or a Bearer header); without
 * it an engine.io session never reaches the event handlers or any room.
 */
export function createSocketServer(http: HttpServer, policy: SecurityPolicy): SocketServer {
  const io: IoServer = new Server<ClientToServerEvents, ServerToClientEvents>(http, {
    serveClient: false,
    // Clients only send tiny subscription messages.
    maxHttpBufferSize: 64 * 1024,
  });
  // Engine middlewares run for every HTTP request engine.io handles, before its own checks.
  io.engine.use((req: IncomingMessage, res: ServerResponse, next: (err?: Error) => void) => {
    const refusal = checkHostAndOrigin(req.headers, policy);
    if (refusal) refuse(req, res, refusal);
    else next();
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
