import { z } from 'zod';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  SEARCH_KINDS,
  SEARCH_LIMIT,
  SEARCH_MAX_QUERY_CHARS,
  type SearchHit,
  type SearchResponse,
} from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { invalidInput } from '../git/index.ts';
import { searchHistory, type SearchLimits } from '../runs/index.ts';
import type { Store } from '../store/index.ts';
import { toolListing } from './mcp-listing.ts';
import type { RemoteServer } from './mcp-remote.ts';

/**
 * `search_history` of `rundiff mcp`: the search of `GET /api/hermes/search` (prompts, replies,
 * commands, file paths, patch text of every recorded session), through the server with `--server`,
 * or over the database itself without one.
 */

export const searchHistoryInput = z.strictObject({
  query: z
    .string()
    .min(1)
    .max(SEARCH_MAX_QUERY_CHARS)
    .describe(
      'words (all must match), "quoted phrases", and filters path:, agent:, status:(running|completed|failed), session:, kind:(title,prompt,reply,tool,command,path,patch)',
    ),
  session_id: z.string().min(1).max(200).optional().describe('only this session'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(SEARCH_LIMIT.max)
    .optional()
    .describe(`hits answered (default ${SEARCH_LIMIT.default})`),
});

const hit = z.object({
  kind: z.enum(SEARCH_KINDS as [string, ...string[]]),
  session_id: z.string(),
  session_title: z.string().nullable(),
  run_id: z.string().nullable(),
  run_status: z.string().nullable(),
  tool_call_id: z.string().nullable(),
  message_id: z.string().nullable(),
  change_id: z.string().nullable(),
  file_id: z.string().nullable(),
  path: z.string().nullable(),
  line: z.number().nullable(),
  side: z.enum(['before', 'after']).nullable(),
  at: z.number(),
  snippet: z.string(),
  matches: z.array(z.object({ start: z.number(), end: z.number() })),
});
const searchHistoryOutput = z.object({
  hits: z.array(hit),
  more: z.boolean(),
  capped: z.boolean(),
  timed_out: z.boolean(),
});

export const SEARCH_HISTORY_LISTING: Tool = toolListing({
  name: 'search_history',
  title: 'Search recorded history',
  description:
    'Searches everything rundiff recorded across sessions: session titles, prompts, replies, tool call commands, changed file paths and patch text. Words must all match (case-insensitive substrings, one of 3+ characters), "phrases" match as written; filters path:, agent:, status:, session:, kind:. Each hit names its session, run, change and file, and for patch text the line (side after = new file, before = old file), newest first.',
  input: searchHistoryInput,
  output: searchHistoryOutput,
  readOnly: true,
  idempotent: true,
});

/** One readable line per hit: where it is, then the matching line. */
export function searchText(answer: SearchResponse): string {
  if (answer.timed_out) return 'The search took too long and was stopped: narrow the query.';
  if (answer.hits.length === 0)
    return answer.capped ? 'No hits among the newest matches looked at: narrow the query.' : 'No hits.';
  const where = (h: SearchHit) => {
    const place = h.path !== null ? `${h.path}${h.line !== null ? `:${h.line} (${h.side})` : ''}` : h.kind;
    const run = h.run_id !== null ? ` run ${h.run_id}` : '';
    return `${h.kind} ${place} · session ${h.session_id}${run}${h.change_id !== null ? ` change ${h.change_id}` : ''}`;
  };
  const lines = answer.hits.map((h) => `${where(h)}\n  ${h.snippet}`);
  if (answer.more) lines.push('More hits exist: narrow the query or raise limit.');
  if (answer.capped) lines.push('Only the newest matches were looked at: narrow the query to see older ones.');
  return lines.join('\n');
}

const failure = (err: AppError): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(err.toBody()) }],
  isError: true,
});

export async function callSearchHistory(
  from: { remote: RemoteServer } | { store: Store; limits: SearchLimits },
  args: unknown,
): Promise<CallToolResult> {
  const parsed = searchHistoryInput.safeParse(args ?? {});
  if (!parsed.success) return failure(invalidInput(parsed.error));
  const { query, session_id, limit } = parsed.data;
  try {
    let answer: SearchResponse;
    if ('remote' in from) {
      const params = new URLSearchParams({ q: query });
      if (session_id !== undefined) params.set('session', session_id);
      if (limit !== undefined) params.set('limit', String(limit));
      answer = await from.remote.getJson<SearchResponse>(`/api/hermes/search?${params.toString()}`);
    } else {
      answer = await searchHistory(from.store, from.limits, query, {
        ...(limit !== undefined ? { limit } : {}),
        ...(session_id !== undefined ? { sessionId: session_id } : {}),
      });
    }
    return { content: [{ type: 'text', text: searchText(answer) }], structuredContent: { ...answer } };
  } catch (err) {
    if (err instanceof AppError) return failure(err);
    throw err;
  }
}
