export * from './safe-read.ts';
export * from './safe-write.ts';
