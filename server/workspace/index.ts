export * from './path-bytes.ts';
export * from './resolve.ts';
