export * from './workspace-watch.ts';
export * from './watches.ts';
