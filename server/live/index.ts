export * from './feed.ts';
export * from './ignore.ts';
export * from './observer.ts';
export * from './poller.ts';
export * from './check-delay.ts';
export * from '../watch/index.ts';
