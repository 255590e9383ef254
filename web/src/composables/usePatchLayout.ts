import type { Ref } from 'vue';
import type { PatchLayout } from '../patch/rows.ts';
import { rememberedChoice } from './remembered.ts';

/** Unified or split, shared by every open patch and remembered in localStorage. */
export const usePatchLayout = (): Ref<PatchLayout> =>
  rememberedChoice<PatchLayout>('rundiff.patchLayout', (s) => (s === 'split' ? 'split' : 'unified'), String);
