import type { CommentState, DeliveryChannel, Review, ReviewComment, ReviewReader } from '../../../shared/index.ts';

/** Formats an epoch-ms time for display (injected: the app passes the browser's local time). */
export type TimeText = (ms: number) => string;

const CHANNEL: Record<DeliveryChannel, string> = { hook: 'hook', mcp: 'MCP', rest: 'REST' };

/** `via hook to claude-code`, `via REST`: how a review reached the agent. */
export function deliveryText(via: DeliveryChannel | null, to: string | null): string {
  const channel = via ? ` via ${CHANNEL[via]}` : '';
  return to ? `${channel} to ${to}` : channel;
}

/** A comment's state as one short badge: `Draft`, `Pending`, `Delivered 10:32 via hook to claude-code`, `Addressed`. */
export function commentStateText(comment: ReviewComment, review: Review | null, time: TimeText): string {
  const LABEL: Record<CommentState, string> = {
    draft: 'Draft',
    pending: 'Pending',
    delivered: 'Delivered',
    addressed: 'Addressed',
  };
  if (comment.state !== 'delivered' || comment.delivered_at === null) return LABEL[comment.state];
  return `Delivered ${time(comment.delivered_at)}${deliveryText(comment.delivered_via, review?.delivered_to ?? null)}`;
}

/** Where an outdated comment's lines are now, as a link text: `now at lines 14-16`, `now at src/b.ts line 3`. */
export function currentText(comment: ReviewComment): string | null {
  const c = comment.current;
  if (!comment.outdated || !c) return null;
  const where = c.start_line === c.end_line ? `line ${c.start_line}` : `lines ${c.start_line}-${c.end_line}`;
  return c.path === comment.anchor.path ? `now at ${where}` : `now at ${c.path} ${where}`;
}

/**
 * A review's state in a sentence. `reader` is who reads the session's reviews (the server's
 * `ReviewReader.channel`; null: not known): a pending review nobody reads says so instead of
 * promising a next prompt.
 */
export function reviewStatusText(
  review: Review,
  time: TimeText,
  reader: ReviewReader['channel'] | null = null,
): string {
  if (review.state === 'delivered' && review.delivered_at !== null)
    return `Delivered ${time(review.delivered_at)}${deliveryText(review.delivered_via, review.delivered_to)}`;
  if (reader === 'none') return 'Pending: no agent reads reviews from this session; copy its text to your agent';
  if (reader === 'mcp') return 'Pending: the agent gets it when it next calls review_comments';
  return review.mode === 'now'
    ? 'Pending: the agent gets it when it finishes its turn (asked to continue) or at its next prompt'
    : 'Pending: the agent gets it at its next prompt';
}

/** `12 / 8,000`: a text's length against its bound; `over` when it does not fit. */
export function charCount(text: string, max: number): { text: string; over: boolean } {
  return { text: `${text.length.toLocaleString('en-US')} / ${max.toLocaleString('en-US')}`, over: text.length > max };
}

/** Something can be sent: a draft comment, or a note (within its bound). */
export function canSend(draftCount: number, note: string, maxNoteChars: number): boolean {
  if (note.length > maxNoteChars) return false;
  return draftCount > 0 || note.trim() !== '';
}

export interface FileGroup {
  key: string;
  change_id: string;
  file_id: string;
  path: string;
  comments: ReviewComment[];
}

/**
 * Comments by file (one group per file of each change), groups in path order (the same path
 * changed by two runs: the older comments first), comments by side (before, then after) and line.
 */
export function groupByFile(comments: readonly ReviewComment[]): FileGroup[] {
  const groups = new Map<string, FileGroup>();
  for (const c of comments) {
    const key = `${c.anchor.change_id}\n${c.anchor.file_id}`;
    let g = groups.get(key);
    if (!g) {
      g = { key, change_id: c.anchor.change_id, file_id: c.anchor.file_id, path: c.anchor.path, comments: [] };
      groups.set(key, g);
    }
    g.comments.push(c);
  }
  const first = (g: FileGroup) => Math.min(...g.comments.map((c) => c.created_at));
  const out = [...groups.values()].sort((a, b) => (a.path === b.path ? first(a) - first(b) : a.path < b.path ? -1 : 1));
  for (const g of out)
    g.comments.sort(
      (a, b) =>
        (a.anchor.side === b.anchor.side ? 0 : a.anchor.side === 'before' ? -1 : 1) ||
        a.anchor.start_line - b.anchor.start_line ||
        a.created_at - b.created_at,
    );
  return out;
}

/** A comment's state in parts, for a badge that marks its time up as a `<time>`: `Delivered` `<at>` ` via hook to claude-code`. */
export function commentStateParts(
  comment: ReviewComment,
  review: Review | null,
): { label: string; at: number | null; via: string } {
  if (comment.state !== 'delivered' || comment.delivered_at === null)
    return { label: commentStateText(comment, review, () => ''), at: null, via: '' };
  return {
    label: 'Delivered',
    at: comment.delivered_at,
    via: deliveryText(comment.delivered_via, review?.delivered_to ?? null),
  };
}

/** Above this many characters, or lines, a comment's text is clamped behind "Show more". */
export const LONG_BODY_CHARS = 600;
export const LONG_BODY_LINES = 8;

/** A comment's text is long enough to be clamped (a card of 90 lines buries the patch around it). */
export function isLongBody(body: string): boolean {
  if (body.length > LONG_BODY_CHARS) return true;
  let lines = 1;
  for (let i = body.indexOf('\n'); i >= 0 && lines <= LONG_BODY_LINES; i = body.indexOf('\n', i + 1)) lines++;
  return lines > LONG_BODY_LINES;
}

/**
 * The review panel's two lists: open comments (a draft, or sent and not received yet) and done ones
 * (delivered to the agent, or marked addressed), each in the order given.
 */
export function splitOpenDone(comments: readonly ReviewComment[]): { open: ReviewComment[]; done: ReviewComment[] } {
  const open: ReviewComment[] = [];
  const done: ReviewComment[] = [];
  for (const c of comments) (c.state === 'draft' || c.state === 'pending' ? open : done).push(c);
  return { open, done };
}

/** The timeline's mark where a review reached the agent: `Review delivered to claude-code via hook · 2 comments`. */
export function reviewMarkerText(review: Review): string {
  const to = review.delivered_to ? ` to ${review.delivered_to}` : '';
  const via = review.delivered_via ? ` via ${CHANNEL[review.delivered_via]}` : '';
  const n = review.comment_ids.length;
  const what =
    n === 0
      ? review.note
        ? 'a note'
        : 'no comments'
      : `${n} ${n === 1 ? 'comment' : 'comments'}${review.note ? ' and a note' : ''}`;
  return `Review delivered${to}${via} · ${what}`;
}
