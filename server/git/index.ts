export * from './runner.ts';
export * from './repo.ts';
export * from './diff-engine.ts';
export * from './tools/index.ts';
export * from './merge-file.ts';
