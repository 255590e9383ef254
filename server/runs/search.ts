import {
  SEARCH_LIMIT,
  SEARCH_MIN_TERM_CHARS,
  SEARCH_SNIPPET_CHARS,
  type Limits,
  type SearchHit,
  type SearchMatch,
  type SearchResponse,
} from '../../shared/index.ts';
import type { SearchRow, Store } from '../store/index.ts';
import { indexable, parseSearchQuery, searchQueryError, type ParsedQuery } from './search-query.ts';

export type SearchLimits = Pick<Limits, 'searchPatchChars' | 'searchMaxCandidates' | 'searchTimeoutMs'>;

export interface SearchOptions {
  /** Hits answered (1..`SEARCH_LIMIT.max`). */
  limit?: number;
  /** Only this session (as `session:` in the query; both may not disagree). */
  sessionId?: string;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every place a term occurs in `text` (case-insensitive), in order, overlaps merged. */
export function matchesIn(text: string, terms: readonly string[]): SearchMatch[] {
  const found: SearchMatch[] = [];
  for (const t of terms) {
    if (t === '') continue;
    for (const m of text.matchAll(new RegExp(escapeRegExp(t), 'giu')))
      found.push({ start: m.index, end: m.index + m[0].length });
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: SearchMatch[] = [];
  for (const m of found) {
    const last = merged[merged.length - 1];
    if (last && m.start <= last.end) last.end = Math.max(last.end, m.end);
    else merged.push({ ...m });
  }
  return merged;
}

/** How many of the terms a line holds. */
const score = (line: string, terms: readonly string[]): number =>
  terms.reduce((n, t) => n + (new RegExp(escapeRegExp(t), 'iu').test(line) ? 1 : 0), 0);

interface Located {
  text: string;
  line: number | null;
  side: 'before' | 'after' | null;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/**
 * The patch line a hit points at: the added or removed line holding the most terms (an unchanged
 * line only when no changed one holds any), with its number in the new file (`after`: added and
 * unchanged lines) or the old one (`before`: removed lines).
 */
export function locateInPatch(patch: string, terms: readonly string[]): Located {
  let oldLine = 0;
  let newLine = 0;
  let inHunk = false;
  let best: (Located & { score: number; changed: boolean }) | null = null;
  for (const text of patch.split('\n')) {
    const h = HUNK.exec(text);
    if (h) {
      oldLine = Number(h[1]);
      newLine = Number(h[2]);
      inHunk = true;
      continue;
    }
    if (!inHunk) continue;
    const mark = text[0];
    let at: Located | null = null;
    if (mark === '+') at = { text, line: newLine++, side: 'after' };
    else if (mark === '-') at = { text, line: oldLine++, side: 'before' };
    else if (mark === ' ') {
      at = { text, line: newLine, side: 'after' };
      oldLine++;
      newLine++;
    } else if (mark !== '\\') inHunk = false; // the next file's header, or the end
    if (!at) continue;
    const s = score(text, terms);
    if (s === 0) continue;
    const changed = mark !== ' ';
    if (!best || (changed && !best.changed) || (changed === best.changed && s > best.score))
      best = { ...at, score: s, changed };
  }
  if (best) return { text: best.text, line: best.line, side: best.side };
  return { text: firstLine(patch, terms), line: null, side: null };
}

/** The line of a text holding the most terms (the first line when none does). */
function firstLine(text: string, terms: readonly string[]): string {
  let best = '';
  let bestScore = -1;
  for (const line of text.split('\n')) {
    const s = score(line, terms);
    if (s > bestScore) [best, bestScore] = [line, s];
    if (bestScore === terms.length) break;
  }
  return best;
}

/** At most `SEARCH_SNIPPET_CHARS` of a line, around its first match, with the matches marked. */
export function snippetOf(line: string, terms: readonly string[]): { snippet: string; matches: SearchMatch[] } {
  const clean = line.replace(/\r$/, '');
  let text = clean;
  if (clean.length > SEARCH_SNIPPET_CHARS) {
    const first = matchesIn(clean, terms)[0]?.start ?? 0;
    const start = Math.max(0, Math.min(first - 40, clean.length - SEARCH_SNIPPET_CHARS + 1));
    text = (start > 0 ? '…' : '') + clean.slice(start, start + SEARCH_SNIPPET_CHARS - (start > 0 ? 1 : 0));
  }
  return { snippet: text, matches: matchesIn(text, terms) };
}

/** A found document as a hit: where it is, and the line of it that matched. */
export function hitOf(row: SearchRow, terms: readonly string[]): SearchHit {
  const file = row.kind === 'path' || row.kind === 'patch';
  const located: Located =
    row.kind === 'patch'
      ? locateInPatch(row.body, terms)
      : { text: firstLine(row.body, terms), line: null, side: null };
  const message = row.kind === 'prompt' || row.kind === 'reply' || row.kind === 'tool';
  return {
    kind: row.kind,
    session_id: row.session_id,
    session_title: row.session_title,
    run_id: row.run_id,
    run_status: row.run_status,
    tool_call_id: row.tool_call_id,
    message_id: message ? row.ref : null,
    change_id: file ? row.change_id : null,
    file_id: file ? row.ref : null,
    path: row.path,
    line: located.line,
    side: located.side,
    at: row.at,
    ...snippetOf(located.text, terms),
  };
}

/** Characters of a document read back: a patch as indexed, other texts enough to find their line. */
const bodyChars = (limits: SearchLimits): number => Math.max(limits.searchPatchChars, 64 * 1024);

/**
 * Runs a query (the search box's text, `parseSearchQuery`) over the store: the newest hits first,
 * each with its line and snippet. A bound tripped is said in the answer, never an error.
 */
export async function searchHistory(
  store: Pick<Store, 'search'>,
  limits: SearchLimits,
  q: string,
  opts: SearchOptions = {},
): Promise<SearchResponse> {
  const parsed: ParsedQuery = parseSearchQuery(q);
  if (opts.sessionId !== undefined) {
    if (parsed.session !== null && parsed.session !== opts.sessionId)
      throw searchQueryError('session: in q names another session than the session parameter');
    parsed.session = opts.sessionId;
  }
  if (parsed.session === null && !indexable(parsed))
    throw searchQueryError(
      `a search over all sessions needs a word, "phrase" or path: of at least ${SEARCH_MIN_TERM_CHARS} characters`,
    );
  // A path alone searches the files' paths.
  const pathOnly = parsed.terms.length === 0;
  const terms = pathOnly ? [parsed.path!] : parsed.terms;
  const found = await store.search.search({
    terms,
    path: pathOnly ? null : parsed.path,
    agent: parsed.agent,
    status: parsed.status,
    sessionId: parsed.session,
    kinds: pathOnly ? ['path'] : parsed.kinds,
    limit: Math.min(Math.max(1, opts.limit ?? SEARCH_LIMIT.default), SEARCH_LIMIT.max),
    maxCandidates: limits.searchMaxCandidates,
    timeoutMs: limits.searchTimeoutMs,
    bodyChars: bodyChars(limits),
  });
  return {
    hits: found.rows.map((r) => hitOf(r, terms)),
    more: found.more,
    capped: found.capped,
    timed_out: found.timed_out,
  };
}
