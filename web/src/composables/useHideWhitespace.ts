import { ref, watch, type Ref } from 'vue';

const KEY = 'rundiff.hideWhitespace';

function stored(): boolean {
  try {
    return localStorage.getItem(KEY) === 'true';
  } catch {
    return false; // storage disabled
  }
}

let hide: Ref<boolean> | null = null;

/** Whether patches hide whitespace-only changes: one choice for every patch, remembered in localStorage. */
export function useHideWhitespace(): Ref<boolean> {
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
