export * from './resolve.ts';
export * from './pseudo-fs.ts';
export * from './fs-ignore.ts';
export * from './scan-tree.ts';
export * from './read-contents.ts';
export * from './scanner.ts';
