export { createSocketServer, sessionRoom, SESSIONS_ROOM, type SocketServer, type IoServer } from './server.ts';
