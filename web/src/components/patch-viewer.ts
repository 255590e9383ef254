import { markRaw, shallowRef, type ShallowRef } from 'vue';
import type PatchView from './PatchView.vue';

// The patch viewer (highlighting, word diff) is its own chunk, fetched on the first patch opened.
// An async component would render nothing for a frame on its first mount even with the chunk
// here: a row would shrink between its "Loading patch…" line and the patch, and a list scrolled
// to its end would pull every row down to fill the gap. So the chunk is loaded once into a value
// every row shares, and a row shows its loading line until the value is set: from then on the
// viewer renders in the same frame as the patch.

const viewer = shallowRef<typeof PatchView | null>(null);
const failure = shallowRef<Error | null>(null);
let pending: Promise<void> | null = null;

export interface PatchViewer {
  /** The viewer component, once its chunk is here. */
  component: ShallowRef<typeof PatchView | null>;
  /** Why the chunk could not be fetched (a new call tries again). */
  error: ShallowRef<Error | null>;
}

/** The shared viewer, fetching its chunk if no row has yet. */
export function usePatchViewer(): PatchViewer {
  if (viewer.value === null && pending === null) {
    failure.value = null;
    pending = import('./PatchView.vue').then(
      (m) => {
        viewer.value = markRaw(m.default);
      },
      (err: unknown) => {
        failure.value = err instanceof Error ? err : new Error(String(err));
        pending = null;
      },
    );
  }
  return { component: viewer, error: failure };
}
