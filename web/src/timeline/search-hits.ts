import type { SearchHit, SearchKind, SearchMatch } from '../../../shared/index.ts';

/** A piece of a snippet: plain text, marked when it is one of the query's matches. */
export interface SnippetPart {
  text: string;
  mark: boolean;
}

/**
 * A snippet cut at its matches, in order (rendered as text nodes and `<mark>`, never as HTML).
 * Offsets out of range or overlapping an earlier one are clamped, so a bad answer cannot hide text.
 */
export function snippetParts(snippet: string, matches: readonly SearchMatch[]): SnippetPart[] {
  const parts: SnippetPart[] = [];
  let at = 0;
  for (const m of matches) {
    const start = Math.max(at, Math.min(m.start, snippet.length));
    const end = Math.max(start, Math.min(m.end, snippet.length));
    if (start > at) parts.push({ text: snippet.slice(at, start), mark: false });
    if (end > start) parts.push({ text: snippet.slice(start, end), mark: true });
    at = end;
  }
  if (at < snippet.length) parts.push({ text: snippet.slice(at), mark: false });
  return parts;
}

const KIND_LABELS: Record<SearchKind, string> = {
  title: 'Title',
  prompt: 'Prompt',
  reply: 'Reply',
  tool: 'Tool message',
  command: 'Command',
  path: 'File',
  patch: 'Patch',
};

/** What a hit was found in, in words: a run's own title is told apart from its session's. */
export const hitKindLabel = (hit: SearchHit): string =>
  hit.kind === 'title' && hit.run_id !== null ? 'Run title' : KIND_LABELS[hit.kind];

/** Where a hit is, in words: `src/app.ts line 3 (new)` for a patch line, the path for a file. */
export function hitPlace(hit: SearchHit): string | null {
  if (hit.path === null) return null;
  if (hit.line === null) return hit.path;
  return `${hit.path} line ${hit.line} (${hit.side === 'before' ? 'old' : 'new'})`;
}

/** The session page's query that opens a hit: the file (and line) for a file hit, nothing else otherwise. */
export function hitQuery(hit: SearchHit): Record<string, string> {
  if (hit.change_id === null || hit.file_id === null) return {};
  const q: Record<string, string> = { change: hit.change_id, file: hit.file_id };
  if (hit.line !== null && hit.side !== null) Object.assign(q, { side: hit.side, line: String(hit.line) });
  return q;
}
