export * from './feed.ts';
export * from './git-ignore.ts';
