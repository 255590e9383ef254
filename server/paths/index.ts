export * from './path-bytes.ts';
export * from './inside.ts';
