export * from './temp-repo.ts';
export * from './planted.ts';
