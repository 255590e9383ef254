export * from './watch-budget.ts';
export * from './folder-watcher.ts';
