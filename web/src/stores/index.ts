/** Pinia setup stores, one per domain, fed by socket reducers. */
export { useAuthStore } from './auth.ts';
export { useConnectionStore } from './connection.ts';
export { useNoticesStore } from './notices.ts';
export { useSessionStore } from './session.ts';
export { useSessionsStore } from './sessions.ts';
export { useViewedStore } from './viewed.ts';
