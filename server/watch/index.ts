export * from './watch-budget.ts';
export * from './folder-watcher.ts';
export * from './sync-point.ts';
