export { createReverter, type Reverter, type RevertDeps } from './revert.ts';
