export { createEngine } from './registry.ts';
export type * from './types.ts';
export { ttlSweepIntervalMs } from './ttl.ts';
