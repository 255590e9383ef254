import { markRaw, reactive, watch } from 'vue';
import { FILES_PAGE_DEFAULT, type ChangeSummary, type FileSummary } from '../../../shared/index.ts';
import { api, toApiError } from '../api/index.ts';
import {
  applyRows,
  failedText,
  pageRequest,
  pagesToLoad,
  retryFailed,
  startPages,
  type FilePages,
} from '../timeline/index.ts';

/**
 * Every row of one change, fetched page by page as a list shows them. The rows live outside Vue's
 * reactivity (a change may hold 100,000); `version` is bumped whenever rows arrive or a page fails,
 * and readers go through `row()`, which reads it.
 */
export interface ChangeFiles {
  /** Bumped on every change of the rows, the pending pages or the failures. */
  version: number;
  /** The whole list is shown (a windowed list) rather than the summary's first page. */
  showAll: boolean;
  /** Ids of the rows whose patch is open: kept while a row scrolls out of the window and back. */
  expanded: Set<string>;
  /** Ids of the big patches the reader chose to load ("Load diff"). */
  loaded: Set<string>;
  /** Folders of the tree view shown closed, by path. */
  closedFolders: Set<string>;
  /** The whole block's list is folded away. */
  collapsed: boolean;
  readonly pages: FilePages;
}

interface Entry {
  state: ChangeFiles;
  /** The rows the list last asked for, fetched again when a page completes. */
  want: { start: number; end: number };
}

// One entry per change for the page's lifetime (a stored change never changes), dropped with the
// session like the patches, so leaving a session and coming back starts from its detail again.
const cache = new Map<string, Entry>();

const keyOf = (sessionId: string, changeId: string) => JSON.stringify([sessionId, changeId]);

function entryFor(sessionId: string, change: ChangeSummary): Entry {
  const key = keyOf(sessionId, change.change_id);
  const total = change.files_total ?? change.files.length;
  const known = cache.get(key);
  if (known && known.state.pages.total === total) return known;
  const entry: Entry = {
    state: reactive({
      version: 0,
      showAll: false,
      expanded: new Set<string>(),
      loaded: new Set<string>(),
      closedFolders: new Set<string>(),
      collapsed: false,
      pages: markRaw(startPages(change, FILES_PAGE_DEFAULT)),
    }),
    want: { start: 0, end: 0 },
  };
  cache.set(key, entry);
  return entry;
}

function load(sessionId: string, changeId: string, entry: Entry): void {
  const { state } = entry;
  const pages = state.pages;
  for (const page of pagesToLoad(pages, entry.want.start, entry.want.end)) {
    const request = pageRequest(pages, page);
    if (!request) continue;
    pages.pending.add(page);
    state.version++;
    api
      .getFilesPage(sessionId, changeId, request)
      .then((answer) => {
        applyRows(pages, request.after, answer.files);
        // Fewer rows than asked means the server's change is not the one this list counts on:
        // stop here with a message instead of asking again and again.
        if (pageRequest(pages, page) !== null) {
          pages.failed.set(page, `the server sent ${answer.files.length} of ${request.limit} rows`);
        }
      })
      .catch((err: unknown) => {
        const e = toApiError(err);
        console.warn(`rundiff: files of ${changeId} after ${request.after}: ${e.code} ${e.message}`);
        pages.failed.set(page, e.message);
      })
      .finally(() => {
        pages.pending.delete(page);
        state.version++;
        if (cache.get(keyOf(sessionId, changeId)) === entry) load(sessionId, changeId, entry);
      });
  }
}

export interface ChangeFilesHandle {
  state: ChangeFiles;
  /** Row `index`, or undefined while it is not fetched (reading it tracks `version`). */
  row(index: number): FileSummary | undefined;
  /** The first failure as a sentence, or null. */
  failure(): string | null;
  /** Some page is being fetched. */
  loading(): boolean;
  /** Fetches what rows `start..end` (end exclusive) still lack. */
  want(start: number, end: number): void;
  /** Fetches the failed pages again. */
  retry(): void;
  /**
   * Where the row with id `fileId` is: the rows are fetched page by page from the first one missing
   * until it turns up (the same pages the lists use, so what the lists show stays one list).
   */
  find(fileId: string): Promise<FoundRow>;
}

/** A row looked up by id: its position, or that the change has no such row, or why the pages stopped. */
export type FoundRow = { position: number } | { missing: true } | { failed: string };

/** Resolves at the next change of the rows, pending pages or failures. */
function nextVersion(state: ChangeFiles): Promise<void> {
  return new Promise((resolve) => {
    const stop = watch(
      () => state.version,
      () => {
        stop();
        resolve();
      },
    );
  });
}

/** The rows of `change` in `sessionId`, shared by every block that shows the change. */
export function useChangeFiles(sessionId: string, change: ChangeSummary): ChangeFilesHandle {
  const entry = entryFor(sessionId, change);
  const { state } = entry;
  return {
    state,
    row(index) {
      void state.version;
      return state.pages.rows[index];
    },
    failure() {
      void state.version;
      return failedText(state.pages);
    },
    loading() {
      void state.version;
      return state.pages.pending.size > 0;
    },
    want(start, end) {
      entry.want = { start, end };
      load(sessionId, change.change_id, entry);
    },
    retry() {
      retryFailed(state.pages);
      state.version++;
      load(sessionId, change.change_id, entry);
    },
    async find(fileId) {
      const pages = state.pages;
      for (;;) {
        const at = pages.rows.findIndex((r) => r?.id === fileId);
        if (at >= 0) return { position: at };
        const failed = failedText(pages);
        if (failed) return { failed };
        let first = 0;
        while (first < pages.total && pages.rows[first] !== undefined) first++;
        if (first >= pages.total) return { missing: true };
        const wait = nextVersion(state);
        if (pages.pending.size === 0) {
          entry.want = { start: first, end: first + pages.pageRows * 2 };
          load(sessionId, change.change_id, entry);
        }
        await wait;
      }
    },
  };
}

/** Drops the rows fetched for a session's changes (the session was left or deleted). */
export function forgetChangeFiles(sessionId: string): void {
  for (const key of [...cache.keys()]) if ((JSON.parse(key) as string[])[0] === sessionId) cache.delete(key);
}
