export { createReverter, type Reverter, type RevertDeps } from './revert.ts';
export { hunkName, parseHunkHeader, undoHunks } from './hunks.ts';
