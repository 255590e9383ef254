export { createReverter, type Reverter, type RevertDeps } from './revert.ts';
export { hunkName, hunksOf, parseHunkHeader, undoHunks, type HunkChoice } from './hunks.ts';
