import type { Ref } from 'vue';
import { rememberedSwitch } from './remembered.ts';

/** Whether change blocks leave out their viewed files: one choice for every block, remembered in localStorage. */
export const useHideViewed = (): Ref<boolean> => rememberedSwitch('rundiff.hideViewed');
