export * from './safe-read.ts';
