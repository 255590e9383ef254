export { netChange, type NetRange, type NetResult } from './net-change.ts';
export {
  createKeptPatches,
  fallsShort,
  patchOfSides,
  type KeptPatch,
  type KeptPatchBounds,
  type KeptPatches,
  type PatchedRow,
} from './kept-patch.ts';
