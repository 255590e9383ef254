/** Search over everything recorded (docs/contract.md section 3, `GET /api/hermes/search`). */
import type { RunStatus } from './dto.ts';

/**
 * What a hit was found in: a session's `title`, a user's `prompt`, an agent's `reply`, a `tool`
 * message, a tool call's summary (`command`: the command of a shell call, the file of an edit), a
 * changed file's `path`, or its `patch` text.
 */
export type SearchKind = 'title' | 'prompt' | 'reply' | 'tool' | 'command' | 'path' | 'patch';

export const SEARCH_KINDS: readonly SearchKind[] = ['title', 'prompt', 'reply', 'tool', 'command', 'path', 'patch'];

/** A match inside a snippet: `snippet.slice(start, end)` (UTF-16 offsets, as JavaScript strings index). */
export interface SearchMatch {
  start: number;
  end: number;
}

export interface SearchHit {
  kind: SearchKind;
  session_id: string;
  session_title: string | null;
  /** The run the hit belongs to (null for a title, or a message no run holds). */
  run_id: string | null;
  run_status: RunStatus | null;
  tool_call_id: string | null;
  /** The message a prompt, reply or tool hit is. */
  message_id: string | null;
  /** The stored change and file row of a path or patch hit (the session page's `?change=&file=`). */
  change_id: string | null;
  file_id: string | null;
  path: string | null;
  /**
   * The line of a patch hit, with its side as the session page's links name it: `after` (the new
   * file's line number) for an added or unchanged line, `before` (the old file's) for a removed one.
   */
  line: number | null;
  side: 'before' | 'after' | null;
  /** When the hit's row was recorded (epoch ms). */
  at: number;
  /** One line of the text (at most `SEARCH_SNIPPET_CHARS`), plain text, never markup. */
  snippet: string;
  /** Where the query's words and phrases are in `snippet`, in order. */
  matches: SearchMatch[];
}

export interface SearchResponse {
  hits: SearchHit[];
  /** More hits than `limit` exist (narrow the query to see them). */
  more: boolean;
  /**
   * The search looked only at the newest `candidates` documents holding the words (a bound), or its
   * time bound stopped it: hits may be missing; narrow the query.
   */
  capped: boolean;
  timed_out: boolean;
}

/** The longest snippet a hit carries (characters). */
export const SEARCH_SNIPPET_CHARS = 240;
/** Words and phrases shorter than this cannot use the text index alone; a query needs one this long. */
export const SEARCH_MIN_TERM_CHARS = 3;
/** The longest query accepted (characters). */
export const SEARCH_MAX_QUERY_CHARS = 500;
/** Hits answered per query: default and bound. */
export const SEARCH_LIMIT = { default: 50, max: 200 } as const;
