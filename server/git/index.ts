export * from './runner.ts';
export * from './repo.ts';
