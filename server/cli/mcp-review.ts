import { z } from 'zod';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ReviewComment } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { invalidInput } from '../git/index.ts';
import { createReviews, type Delivery, type Reviews } from '../review/index.ts';
import { silentEmitter } from '../runs/index.ts';
import type { Store } from '../store/index.ts';
import { toolListing } from './mcp-listing.ts';
import type { RemoteServer } from './mcp-remote.ts';

/**
 * The review tools of `rundiff mcp`: `review_comments` hands the agent the reviews a person sent
 * for the sessions working in this server's workspaces (structured, and as the same text a prompt
 * hook would add) and marks them delivered by `mcp`; `review_comments_addressed` marks comments
 * done. With `--server` the running server does both (and tells the web UI); without, the local
 * database is written directly and the UI sees it on its next read.
 */

const record = z.record(z.string(), z.unknown());

const deliveriesOutput = z.object({
  /** One per session with reviews waiting: its text and the reviews and comments it carries. */
  deliveries: z.array(
    z.object({ session_id: z.string(), text: z.string(), reviews: z.array(record), comments: z.array(record) }),
  ),
});
const addressedInput = z.strictObject({
  comment_ids: z.array(z.string().min(1).max(200)).min(1).max(500),
});
const addressedOutput = z.object({ comments: z.array(record), not_found: z.array(z.string()) });

const listing = (
  name: string,
  title: string,
  description: string,
  input: z.ZodType,
  output: z.ZodType,
  readOnly: boolean,
): Tool => toolListing({ name, title, description, input, output, readOnly });

export const REVIEW_TOOL_LISTINGS: Tool[] = [
  listing(
    'review_comments',
    'Review comments',
    "The code review the user sent you through rundiff for this workspace: each comment's file, lines (and which side of the change), the quoted code and the comment, plus the user's overall note. Reviews are handed over once: a call marks them delivered. Address each comment, then call review_comments_addressed with the ids you handled.",
    z.strictObject({}),
    deliveriesOutput,
    false,
  ),
  listing(
    'review_comments_addressed',
    'Mark review comments addressed',
    'Tells the user which review comments (by the ids review_comments gave) you have addressed. Unknown ids, or ids of sessions outside this workspace, come back in not_found.',
    addressedInput,
    addressedOutput,
    false,
  ),
];

export interface ReviewToolsDeps {
  workspaces: readonly string[];
  remote: RemoteServer | null;
  /** Without a server: the local store (the call log's). */
  store: Store | null;
}

function errorResult(err: unknown): CallToolResult {
  const e = err instanceof AppError ? err : new AppError('internal', err instanceof Error ? err.message : String(err));
  return { content: [{ type: 'text', text: JSON.stringify(e.toBody()) }], isError: true };
}

function deliveriesResult(deliveries: Delivery[]): CallToolResult {
  const text =
    deliveries.length === 0
      ? 'No review is waiting for this workspace.'
      : deliveries.map((d) => d.text).join('\n\n---\n\n');
  return { content: [{ type: 'text', text }], structuredContent: { deliveries } };
}

function addressedResult(out: { comments: ReviewComment[]; not_found: string[] }): CallToolResult {
  const done = out.comments.map((c) => c.id);
  const text = [
    done.length > 0 ? `Marked addressed: ${done.join(', ')}.` : 'No comment was marked addressed.',
    out.not_found.length > 0 ? `Not found in this workspace: ${out.not_found.join(', ')}.` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return { content: [{ type: 'text', text }], structuredContent: out };
}

export function createReviewTools(deps: ReviewToolsDeps) {
  let local: Reviews | null = null;
  const reviews = (): Reviews => {
    if (!deps.store) throw new AppError('internal', 'no database to read reviews from');
    local ??= createReviews({ store: deps.store, emitter: silentEmitter });
    return local;
  };
  return {
    listings: REVIEW_TOOL_LISTINGS,
    handles: (name: string) => REVIEW_TOOL_LISTINGS.some((t) => t.name === name),
    async call(name: string, input: unknown, agent: string | undefined): Promise<CallToolResult> {
      try {
        if (name === 'review_comments') {
          const parsed = z.strictObject({}).safeParse(input ?? {});
          if (!parsed.success) throw invalidInput(parsed.error);
          if (deps.remote) return deliveriesResult(await deps.remote.deliverReviews(deps.workspaces, agent));
          return deliveriesResult(await reviews().deliverTo(deps.workspaces, 'mcp', agent ?? null));
        }
        const parsed = addressedInput.safeParse(input ?? {});
        if (!parsed.success) throw invalidInput(parsed.error);
        if (deps.remote)
          return addressedResult(await deps.remote.addressComments(deps.workspaces, parsed.data.comment_ids));
        return addressedResult(await reviews().addressIn(deps.workspaces, parsed.data.comment_ids));
      } catch (err) {
        return errorResult(err);
      }
    },
  };
}
