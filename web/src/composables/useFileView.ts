import type { Ref } from 'vue';
import { rememberedChoice } from './remembered.ts';

export type FileView = 'flat' | 'tree';

/** A change's files as a flat list or a folder tree: one choice for every block, remembered in localStorage. */
export const useFileView = (): Ref<FileView> =>
  rememberedChoice<FileView>('rundiff.fileView', (s) => (s === 'tree' ? 'tree' : 'flat'), String);
