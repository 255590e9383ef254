import {
  SEARCH_KINDS,
  SEARCH_MAX_QUERY_CHARS,
  SEARCH_MIN_TERM_CHARS,
  type RunStatus,
  type SearchKind,
} from '../../shared/index.ts';
import { AppError } from '../errors.ts';

/**
 * The search box's syntax (docs/contract.md, "Search"): words and "quoted phrases" that must all
 * appear, and filters `path:`, `agent:`, `status:`, `session:`, `kind:` (a value with spaces in
 * quotes: `path:"my docs/"`). A word with a colon that names no filter (`http://x`, `a:b`) is a word.
 */
export interface ParsedQuery {
  terms: string[];
  path: string | null;
  agent: string | null;
  status: RunStatus | null;
  session: string | null;
  kinds: SearchKind[] | null;
}

/** Words and phrases one query may hold. */
export const SEARCH_MAX_TERMS = 16;

const FILTERS = ['path', 'agent', 'status', 'session', 'kind'] as const;
type Filter = (typeof FILTERS)[number];
const STATUSES: readonly RunStatus[] = ['running', 'completed', 'failed'];

const bad = (message: string): AppError => new AppError('invalid_input', message, { details: { field: 'q' } });

/** A token: a bare or quoted text, or a filter with its value. */
type Token = { filter: Filter | null; value: string; quoted: boolean };

function tokens(q: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const quoted = (from: number): { value: string; end: number } => {
    const close = q.indexOf('"', from + 1);
    if (close < 0) throw bad(`the phrase starting at character ${from + 1} has no closing quote (")`);
    return { value: q.slice(from + 1, close), end: close + 1 };
  };
  while (i < q.length) {
    if (/\s/.test(q[i]!)) {
      i++;
      continue;
    }
    if (q[i] === '"') {
      const { value, end } = quoted(i);
      out.push({ filter: null, value, quoted: true });
      i = end;
      continue;
    }
    const m = /^([a-z]+):/i.exec(q.slice(i));
    const name = m?.[1]?.toLowerCase();
    if (m && (FILTERS as readonly string[]).includes(name!)) {
      const at = i + m[0].length;
      if (q[at] === '"') {
        const { value, end } = quoted(at);
        out.push({ filter: name as Filter, value, quoted: true });
        i = end;
      } else {
        let end = at;
        while (end < q.length && !/\s/.test(q[end]!)) end++;
        out.push({ filter: name as Filter, value: q.slice(at, end), quoted: false });
        i = end;
      }
      continue;
    }
    let end = i;
    while (end < q.length && !/\s/.test(q[end]!) && q[end] !== '"') end++;
    out.push({ filter: null, value: q.slice(i, end), quoted: false });
    i = end;
  }
  return out;
}

/**
 * Parses a query; refuses (400 `invalid_input`, naming what is wrong) an unclosed quote, an empty
 * or repeated filter, an unknown status or kind, more than `SEARCH_MAX_TERMS` terms, and a query
 * over all sessions without a word, phrase or path of `SEARCH_MIN_TERM_CHARS` characters (the text
 * index cannot look up shorter ones).
 */
export function parseSearchQuery(q: string): ParsedQuery {
  if (q.length > SEARCH_MAX_QUERY_CHARS) throw bad(`q must be at most ${SEARCH_MAX_QUERY_CHARS} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(q)) throw bad('q must not contain control characters');
  const parsed: ParsedQuery = { terms: [], path: null, agent: null, status: null, session: null, kinds: null };
  const seen = new Set<Filter>();
  for (const t of tokens(q)) {
    if (t.filter === null) {
      if (t.value.trim() === '') continue;
      parsed.terms.push(t.value);
      continue;
    }
    if (t.value === '') throw bad(`${t.filter}: needs a value (${t.filter}:"two words" when it has spaces)`);
    if (seen.has(t.filter)) throw bad(`${t.filter}: may be given once`);
    seen.add(t.filter);
    switch (t.filter) {
      case 'path':
        parsed.path = t.value;
        break;
      case 'agent':
        parsed.agent = t.value;
        break;
      case 'session':
        parsed.session = t.value;
        break;
      case 'status':
        if (!(STATUSES as readonly string[]).includes(t.value))
          throw bad(`status: must be one of ${STATUSES.join(', ')} (got ${JSON.stringify(t.value)})`);
        parsed.status = t.value as RunStatus;
        break;
      case 'kind': {
        const kinds = t.value.split(',').filter((k) => k !== '');
        const unknown = kinds.find((k) => !(SEARCH_KINDS as readonly string[]).includes(k));
        if (unknown !== undefined || kinds.length === 0)
          throw bad(
            `kind: takes ${SEARCH_KINDS.join(', ')} (comma-separated); got ${JSON.stringify(unknown ?? t.value)}`,
          );
        parsed.kinds = kinds as SearchKind[];
        break;
      }
    }
  }
  if (parsed.terms.length > SEARCH_MAX_TERMS)
    throw bad(`a query may hold at most ${SEARCH_MAX_TERMS} words and phrases`);
  if (parsed.terms.length === 0 && parsed.path === null)
    throw bad('say what to search for: a word, a "phrase" or path:');
  return parsed;
}

/** Whether a query over all sessions can use the text index: one term (or the path alone) long enough. */
export function indexable(p: ParsedQuery): boolean {
  const long = (t: string) => [...t].length >= SEARCH_MIN_TERM_CHARS;
  return p.terms.length === 0 ? long(p.path ?? '') : p.terms.some(long);
}

export { bad as searchQueryError };
