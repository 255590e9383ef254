export * from './workspace-watch.ts';
export * from './watches.ts';
export * from './one-at-a-time.ts';
