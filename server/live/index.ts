export * from './feed.ts';
export * from './ignore.ts';
export * from './observer.ts';
