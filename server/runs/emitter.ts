import type { ServerEventName, ServerToClientEvents } from '../../shared/index.ts';

export type EventPayload<E extends ServerEventName> = Parameters<ServerToClientEvents[E]>[0];

/**
 * Where the recorder sends its events. The socket module implements it; the in-process API uses a
 * silent one. Declared here so the recorder does not depend on socket.io.
 */
export interface RecorderEmitter {
  /** To the subscribers of one session (`session.subscribe`). */
  toSession<E extends ServerEventName>(sessionId: string, event: E, payload: EventPayload<E>): void;
  /** To the subscribers of the sessions list (`sessions.subscribe`). */
  toSessionsList<E extends ServerEventName>(event: E, payload: EventPayload<E>): void;
}

export const silentEmitter: RecorderEmitter = {
  toSession: () => {},
  toSessionsList: () => {},
};
