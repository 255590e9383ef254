export { createEngine } from './registry.ts';
export type * from './types.ts';
