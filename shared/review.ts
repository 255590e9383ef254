/**
 * Review comments on a run's lines and the reviews that carry them back to the agent
 * (docs/contract.md section 3c). Field names snake_case, times epoch ms.
 */

/** Which side of a file's patch a comment is on: the file before the change or after it. */
export type CommentSide = 'before' | 'after';

/**
 * `draft`: written, not sent yet; `pending`: sent, waiting for the agent to receive it;
 * `delivered`: the agent received it (through its hooks, MCP or a REST client); `addressed`: the
 * agent or the person marked it done.
 */
export type CommentState = 'draft' | 'pending' | 'delivered' | 'addressed';

/** How a review reached the agent. */
export type DeliveryChannel = 'hook' | 'mcp' | 'rest';

/**
 * `next_prompt`: at the agent's next prompt (its prompt hook adds the review as context);
 * `now`: also ask an agent that is finishing its turn to continue with the review (a stop hook that
 * can do so), and otherwise at the next prompt.
 */
export type DeliveryMode = 'next_prompt' | 'now';

/** Where a comment was written: lines `start_line..end_line` (1-based, inclusive) of one side of one file of one change. */
export interface CommentAnchor {
  change_id: string;
  file_id: string;
  path: string;
  side: CommentSide;
  start_line: number;
  end_line: number;
  /** The text of those lines when the comment was written (how the anchor is found again). */
  lines: string[];
}

/** Where an outdated comment's lines are now: the same text found in the file after the latest change. */
export interface CommentLocation {
  change_id: string;
  path: string;
  start_line: number;
  end_line: number;
}

export interface ReviewComment {
  id: string;
  session_id: string;
  anchor: CommentAnchor;
  body: string;
  state: CommentState;
  /** The review that sent it; null while a draft. */
  review_id: string | null;
  created_at: number;
  updated_at: number;
  /** A later change of the session changed the anchored lines (or removed the file). */
  outdated: boolean;
  /** When outdated and the anchored text is still found: where it is now; else null. */
  current: CommentLocation | null;
  delivered_at: number | null;
  delivered_via: DeliveryChannel | null;
  addressed_at: number | null;
}

export type ReviewState = 'pending' | 'delivered';

/** One "Send to agent": an overall note and the comments sent with it, delivered as one text. */
export interface Review {
  id: string;
  session_id: string;
  note: string;
  mode: DeliveryMode;
  state: ReviewState;
  comment_ids: string[];
  created_at: number;
  delivered_at: number | null;
  delivered_via: DeliveryChannel | null;
  /** Who received it: the agent's hook name (`claude-code`, ...), an MCP client's name, or a REST caller's `agent`. */
  delivered_to: string | null;
  /** The text the agent receives (or received), exactly as sent. */
  text: string;
}

/**
 * `GET /api/hermes/sessions/:id/review/reader`: who would read a review sent from this session now,
 * as far as the server knows, so the panel can say so before sending.
 */
export interface ReviewReader {
  /**
   * `hook`: the agent's rundiff hook adds it to its next prompt; `mcp`: an MCP client (`rundiff mcp`)
   * of the session's workspace fetches it with `review_comments`; `none`: nothing the server knows
   * of takes reviews from this session (copy the text to the agent by hand).
   */
  channel: 'hook' | 'mcp' | 'none';
  /** Who: the hook's agent (`claude-code`), or the MCP client's name when it gave one. */
  agent: string | null;
  /** The same in one sentence for the person. */
  text: string;
}

/** `GET /api/hermes/sessions/:id/review`. */
export interface SessionReviewResponse {
  comments: ReviewComment[];
  reviews: Review[];
}

/** `POST /api/hermes/sessions/:id/comments`. The server reads the lines' text from the stored change. */
export interface NewCommentBody {
  change_id: string;
  file_id: string;
  side: CommentSide;
  start_line: number;
  end_line: number;
  body: string;
}

/** Longest comment body (characters). */
export const MAX_COMMENT_CHARS = 8000;
/** Longest overall note of a review (characters). */
export const MAX_REVIEW_NOTE_CHARS = 8000;
/** Most lines one comment may cover. */
export const MAX_COMMENT_LINES = 200;
/**
 * Longest review text one delivery carries (UTF-8 bytes) when the receiver names no smaller bound
 * (MCP, REST, Gemini CLI); comments that do not fit follow in the next delivery.
 */
export const MAX_REVIEW_TEXT_BYTES = 32 * 1024;

/**
 * How large one delivered review text may be: `bytes` counts UTF-8 bytes, `chars` UTF-16 code units
 * (JavaScript's string length, how a JavaScript agent counts characters).
 */
export interface ReviewTextBound {
  max: number;
  unit: 'bytes' | 'chars';
  /**
   * The agent rewrites `<` and `>` in the text before its model reads it (Gemini CLI makes them
   * `&lt;`/`&gt;`): the text then holds none, its quote marker is `| ` and the person's and the
   * code's `<`/`>` are written as `\u003c`/`\u003e`.
   */
  noAngleBrackets?: boolean;
}

export interface CommentUpdatedPayload {
  session_id: string;
  comment: ReviewComment;
}
export interface CommentDeletedPayload {
  session_id: string;
  comment_id: string;
}
/** A pending review left with nothing to send (its last comment deleted, no note) is removed. */
export interface ReviewDeletedPayload {
  session_id: string;
  review_id: string;
}
export interface ReviewUpdatedPayload {
  session_id: string;
  review: Review;
}
