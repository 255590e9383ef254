export * from './safe-read.ts';
export * from './safe-write.ts';
export * from './real-path.ts';
