import { ref } from 'vue';
import { useRoute, useRouter } from 'vue-router';

/** The file a session URL points at: `?change=<changeId>&file=<fileId>` (plus `&side=&line=` for a line). */
export interface FileLink {
  change: string;
  file: string;
}

/** Moves on each time the page is asked to follow a link it is already on (find in session). */
const followed = ref(0);

/**
 * Deep links to a file of a change. Opening a file's patch writes it into the URL (replacing the
 * history entry: expanding files is not navigation), closing it takes it out again, and a page
 * opened on such a URL opens that file.
 */
export function useFileLink() {
  const route = useRoute();
  const router = useRouter();
  return {
    /** The linked file, or null when the URL names none. */
    linked(): FileLink | null {
      const { change, file } = route.query;
      return typeof change === 'string' && typeof file === 'string' ? { change, file } : null;
    },
    /** Moves on when a link on this page is to be followed (each change block opens it if it holds the file). */
    followed,
    /** Writes a file link (and its line) into the URL, then asks the page's change blocks to open it. */
    async follow(target: FileLink & { side?: 'before' | 'after'; line?: number }): Promise<void> {
      const query: Record<string, string> = { change: target.change, file: target.file };
      if (target.side !== undefined && target.line !== undefined)
        Object.assign(query, { side: target.side, line: String(target.line) });
      await router.replace({ query });
      followed.value++;
    },
    /** A file's patch was opened or closed. */
    toggled(change: string, file: string, open: boolean): void {
      const query = { ...route.query };
      // A line named by an earlier link (`side`, `line`) belongs to that link, not to this toggle.
      delete query.side;
      delete query.line;
      if (open) Object.assign(query, { change, file });
      else if (query.change === change && query.file === file) {
        delete query.change;
        delete query.file;
      } else return;
      void router.replace({ query });
    },
  };
}
