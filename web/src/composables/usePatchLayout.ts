import { ref, watch, type Ref } from 'vue';
import type { PatchLayout } from '../patch/rows.ts';

const KEY = 'rundiff.patchLayout';

function stored(): PatchLayout {
  try {
    return localStorage.getItem(KEY) === 'split' ? 'split' : 'unified';
  } catch {
    return 'unified'; // storage disabled
  }
}

let layout: Ref<PatchLayout> | null = null;

/** Unified or split, shared by every open patch and remembered in localStorage. */
export function usePatchLayout(): Ref<PatchLayout> {
  if (!layout) {
    const r = ref<PatchLayout>(stored());
    watch(r, (v) => {
      try {
        localStorage.setItem(KEY, v);
      } catch {
        // storage disabled: the choice lasts for this page only
      }
    });
    layout = r;
  }
  return layout;
}
