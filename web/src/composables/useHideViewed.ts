import { ref, watch, type Ref } from 'vue';

const KEY = 'rundiff.hideViewed';

function stored(): boolean {
  try {
    return localStorage.getItem(KEY) === 'true';
  } catch {
    return false; // storage disabled
  }
}

let hide: Ref<boolean> | null = null;

/** Whether change blocks leave out their viewed files: one choice for every block, remembered in localStorage. */
export function useHideViewed(): Ref<boolean> {
  if (!hide) {
    const r = ref(stored());
    watch(r, (v) => {
      try {
        localStorage.setItem(KEY, String(v));
      } catch {
        // storage disabled: the choice lasts for this page only
      }
    });
    hide = r;
  }
  return hide;
}
