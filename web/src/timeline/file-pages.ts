import type { ChangeSummary, FileSummary } from '../../../shared/index.ts';

/**
 * Which rows of a change the page holds, and which pages to fetch next. A change's rows are
 * fetched by position (`GET .../files?after=<position>&limit=`): a stored change never changes, so
 * the rows a viewport shows can be fetched directly, without walking every page before them.
 * Row `i` belongs to page `floor(i / pageRows)`.
 */
export interface FilePages {
  /** Stored rows of the change (what can be listed). */
  total: number;
  pageRows: number;
  /** Sparse, `total` long: a row once fetched. */
  rows: (FileSummary | undefined)[];
  /** Rows present. */
  loaded: number;
  /** Pages being fetched. */
  pending: Set<number>;
  /** Pages whose fetch failed, with the message; not fetched again until `retryFailed`. */
  failed: Map<number, string>;
}

/** Pages fetched at once per change: enough to keep up with scrolling, few enough not to flood the server. */
export const MAX_PAGES_IN_FLIGHT = 2;

/** The rows a summary brings (its first page) and the count of all stored rows. */
export function startPages(change: Pick<ChangeSummary, 'files' | 'files_total'>, pageRows: number): FilePages {
  const total = Math.max(change.files_total ?? change.files.length, change.files.length);
  const rows: (FileSummary | undefined)[] = new Array<FileSummary | undefined>(total);
  change.files.forEach((f, i) => (rows[i] = f));
  return {
    total,
    pageRows: Math.max(1, pageRows),
    rows,
    loaded: change.files.length,
    pending: new Set(),
    failed: new Map(),
  };
}

/** The request that completes page `page`: from its first missing row to its end; null when it is whole. */
export function pageRequest(state: FilePages, page: number): { after: number; limit: number } | null {
  const from = page * state.pageRows;
  const to = Math.min(state.total, from + state.pageRows);
  let first = from;
  while (first < to && state.rows[first] !== undefined) first++;
  if (first >= to) return null;
  return { after: first - 1, limit: to - first };
}

function missingIn(state: FilePages, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (state.rows[i] === undefined) return true;
  return false;
}

/**
 * The pages to fetch now for rows `start..end` (end exclusive): pages missing a row of that range, not
 * already pending or failed, nearest to `start` first, no more than the in-flight allowance.
 */
export function pagesToLoad(state: FilePages, start: number, end: number, maxInFlight = MAX_PAGES_IN_FLIGHT): number[] {
  const from = Math.max(0, start);
  const to = Math.min(state.total, end);
  const room = maxInFlight - state.pending.size;
  const out: number[] = [];
  if (from >= to || room <= 0) return out;
  const lastPage = Math.floor((to - 1) / state.pageRows);
  for (let p = Math.floor(from / state.pageRows); p <= lastPage && out.length < room; p++) {
    if (state.pending.has(p) || state.failed.has(p)) continue;
    if (missingIn(state, Math.max(from, p * state.pageRows), Math.min(to, (p + 1) * state.pageRows))) out.push(p);
  }
  return out;
}

/** Rows from a fetch that began after position `after`; rows already present are kept. */
export function applyRows(state: FilePages, after: number, files: readonly FileSummary[]): void {
  files.forEach((f, i) => {
    const at = after + 1 + i;
    if (at >= state.total || state.rows[at] !== undefined) return;
    state.rows[at] = f;
    state.loaded++;
  });
}

/** The first row of page `page` and the last (1-based, for messages: `files 201-400`). */
export function pageSpan(state: FilePages, page: number): { first: number; last: number } {
  const first = page * state.pageRows + 1;
  return { first, last: Math.min(state.total, first + state.pageRows - 1) };
}

/** Every failed page becomes fetchable again. */
export function retryFailed(state: FilePages): void {
  state.failed.clear();
}

/** `Show all 300 files`; `Show all 100000 stored files` when the stored-row bound left paths out. */
export function showAllText(total: number, omittedCount: number): string {
  return `Show all ${total} ${omittedCount > 0 ? 'stored ' : ''}${total === 1 ? 'file' : 'files'}`;
}

/** `Could not load files 201-400: <message>` for the first failed page, with how many more failed. */
export function failedText(state: FilePages): string | null {
  const first = [...state.failed.entries()].sort((a, b) => a[0] - b[0])[0];
  if (!first) return null;
  const span = pageSpan(state, first[0]);
  // The part of the page that was asked for: the first page resumes after the summary's rows.
  const request = pageRequest(state, first[0]);
  const a = request ? request.after + 2 : span.first;
  const b = span.last;
  const others = state.failed.size - 1;
  const more = others > 0 ? ` (and ${others} more ${others === 1 ? 'page' : 'pages'})` : '';
  return `Could not load files ${a}-${b}${more}: ${first[1]}`;
}
