export { createSocketServer, sessionRoom, SESSIONS_ROOM, type SocketServer, type IoServer } from './server.ts';
export { shareEventsThroughPostgres, type Replicas } from './replicas.ts';
