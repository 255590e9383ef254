/** Types shared by the server and the web UI (no runtime dependencies). */
export * from './errors.ts';
export * from './limits.ts';
export * from './dto.ts';
export * from './bridge.ts';
export * from './socket.ts';
export * from './git-tools.ts';
export * from './pick.ts';
export * from './revert.ts';
export * from './review.ts';
export * from './viewed.ts';
export * from './edge.ts';
export * from './duration.ts';
export * from './json-depth.ts';
export * from './search.ts';
export * from './blame.ts';
