export * from './safe-read.ts';
export * from './safe-write.ts';
export * from './real-path.ts';
export * from './long-path.ts';
