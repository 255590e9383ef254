import type { Ref } from 'vue';
import { rememberedSwitch } from './remembered.ts';

/** Whether patches hide whitespace-only changes: one choice for every patch, remembered in localStorage. */
export const useHideWhitespace = (): Ref<boolean> => rememberedSwitch('rundiff.hideWhitespace');
