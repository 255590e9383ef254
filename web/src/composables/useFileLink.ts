import { useRoute, useRouter } from 'vue-router';

/** The file a session URL points at: `?change=<changeId>&file=<fileId>` (plus `&side=&line=` for a line). */
export interface FileLink {
  change: string;
  file: string;
}

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
