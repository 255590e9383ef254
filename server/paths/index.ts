export * from './path-bytes.ts';
