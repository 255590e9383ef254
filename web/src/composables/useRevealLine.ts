import { nextTick } from 'vue';
import { useRoute, useRouter } from 'vue-router';
import type { CommentSide, ReviewComment } from '../../../shared/index.ts';
import { useSessionStore } from '../stores/index.ts';
import { useChangeFiles } from './useChangeFiles.ts';
import { useReview } from './useReview.ts';

/** Where to go: one line of one side of one file of a change. */
export interface LinePlace {
  change: string;
  file: string;
  side: CommentSide;
  line: number;
}

/**
 * Opens a file's patch at a line from anywhere on the session page (the review panel, an outdated
 * comment's "now at" link): unfolds its change block, opens the file, writes the place into the URL
 * (`?change=&file=&side=&line=`, a link that can be shared and reloaded) and asks the patch to
 * scroll the line into view and focus it.
 */
export function useRevealLine() {
  const route = useRoute();
  const router = useRouter();
  const store = useSessionStore();
  const review = useReview();

  function summary(changeId: string) {
    return store.state.changes.find((c) => c.change_id === changeId) ?? null;
  }

  /** The id of `path` among the rows of `changeId` the page holds, or null. */
  function fileIdOf(changeId: string, path: string): string | null {
    const change = summary(changeId);
    const id = store.sessionId;
    if (!change || id === null) return null;
    const inSummary = change.files.find((f) => f.path === path);
    if (inSummary) return inSummary.id;
    const rows = useChangeFiles(id, change).state.pages.rows;
    return rows.find((r) => r?.path === path)?.id ?? null;
  }

  async function go(place: LinePlace): Promise<boolean> {
    const id = store.sessionId;
    const change = summary(place.change);
    if (id === null || !change) {
      console.warn(`rundiff: change ${place.change} is not on this page`);
      return false;
    }
    const files = useChangeFiles(id, change).state;
    files.collapsed = false;
    files.expanded.add(place.file);
    await router.replace({
      query: { ...route.query, change: place.change, file: place.file, side: place.side, line: String(place.line) },
    });
    review.reveal(place);
    await nextTick();
    // An open patch finds the line itself; the file's row is brought into view meanwhile.
    const row = document.querySelector<HTMLElement>(
      `[data-change-id="${CSS.escape(place.change)}"] [data-file-id="${CSS.escape(place.file)}"]`,
    );
    row?.scrollIntoView({ block: 'start' });
    return row !== null;
  }

  return {
    go,
    /** A comment's own lines. */
    toComment: (c: ReviewComment) =>
      go({ change: c.anchor.change_id, file: c.anchor.file_id, side: c.anchor.side, line: c.anchor.start_line }),
    /**
     * Where an outdated comment's text is now (after the latest change: the after side); false when
     * that file is not among the rows the page holds.
     */
    toCurrent: async (c: ReviewComment): Promise<boolean> => {
      const cur = c.current;
      if (!cur) return false;
      const file = fileIdOf(cur.change_id, cur.path);
      if (file === null) {
        console.warn(`rundiff: ${cur.path} of ${cur.change_id} is not among the loaded rows`);
        return false;
      }
      return go({ change: cur.change_id, file, side: 'after', line: cur.start_line });
    },
  };
}
