/** Composables returning plain objects of refs. */
export { forgetPatches, usePatch, type PatchState } from './usePatch.ts';
export { useNow } from './useNow.ts';
