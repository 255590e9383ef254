export * from './temp-repo.ts';
export * from './planted.ts';
export * from './privileges.ts';
export * from './rename-storm.ts';
export * from './blocking-scan.ts';
export * from './folder-flip.ts';
export * from './deep-tree.ts';
export * from './inotify-overflow.ts';
