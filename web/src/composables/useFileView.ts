import { ref, watch, type Ref } from 'vue';

export type FileView = 'flat' | 'tree';

const KEY = 'rundiff.fileView';

function stored(): FileView {
  try {
    return localStorage.getItem(KEY) === 'tree' ? 'tree' : 'flat';
  } catch {
    return 'flat'; // storage disabled
  }
}

let view: Ref<FileView> | null = null;

/** A change's files as a flat list or a folder tree: one choice for every block, remembered in localStorage. */
export function useFileView(): Ref<FileView> {
  if (!view) {
    const r = ref<FileView>(stored());
    watch(r, (v) => {
      try {
        localStorage.setItem(KEY, v);
      } catch {
        // storage disabled: the choice lasts for this page only
      }
    });
    view = r;
  }
  return view;
}
