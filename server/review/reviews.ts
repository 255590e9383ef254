import { randomUUID } from 'node:crypto';
import {
  MAX_COMMENT_CHARS,
  MAX_COMMENT_LINES,
  MAX_REVIEW_NOTE_CHARS,
  MAX_REVIEW_TEXT_BYTES,
  type DeliveryChannel,
  type DeliveryMode,
  type NewCommentBody,
  type Review,
  type ReviewComment,
  type SessionReviewResponse,
} from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { isInside } from '../paths/index.ts';
import type { BridgeEmitter } from '../runs/index.ts';
import type { Store, StoredComment, StoredReview } from '../store/index.ts';
import { linesAt, type Reanchored } from './anchor.ts';
import { createPlacements } from './placement.ts';
import { readSideLines } from './side-lines.ts';
import { reviewText } from './text.ts';

/**
 * Review comments and reviews of a session: writing them (the REST routes), where each comment
 * stands after later changes (computed when read, cached until the session is written again), and
 * handing pending reviews to the agent (its hooks, MCP, or a REST caller) exactly once.
 */

export interface ReviewsDeps {
  store: Store;
  emitter: Pick<BridgeEmitter, 'toSession'>;
  now?: () => number;
  /** The longest text one delivery may carry (UTF-8 bytes); tests pass small values. */
  maxTextBytes?: number;
}

/** What one delivery hands the agent: the texts of the reviews it carries, joined, and which they are. */
export interface Delivery {
  session_id: string;
  text: string;
  reviews: Review[];
  comments: ReviewComment[];
}

const fieldError = (field: string, message: string) => new AppError('invalid_input', message, { details: { field } });

const chars = (s: string) => [...s].length;

/** Between the texts of several reviews delivered at once. */
const REVIEW_SEPARATOR = '\n\n---\n\n';

export function createReviews(deps: ReviewsDeps) {
  const { store, emitter } = deps;
  const now = deps.now ?? Date.now;
  const maxTextBytes = deps.maxTextBytes ?? MAX_REVIEW_TEXT_BYTES;
  const placements = createPlacements(store);

  function sessionOrThrow(sessionId: string): void {
    if (!store.sessions.exists(sessionId)) throw new AppError('not_found', `no session ${JSON.stringify(sessionId)}`);
  }

  function toComment(c: StoredComment, where: Reanchored): ReviewComment {
    return {
      id: c.id,
      session_id: c.session_id,
      anchor: {
        change_id: c.change_id,
        file_id: c.file_id,
        path: c.path,
        side: c.side,
        start_line: c.start_line,
        end_line: c.end_line,
        lines: c.lines,
      },
      body: c.body,
      state: c.state,
      review_id: c.review_id,
      created_at: c.created_at,
      updated_at: c.updated_at,
      outdated: where.outdated,
      current: where.current,
      delivered_at: c.delivered_at,
      delivered_via: c.delivered_via,
      addressed_at: c.addressed_at,
    };
  }

  function commentDto(sessionId: string, id: string): ReviewComment {
    const c = store.reviews.comment(sessionId, id);
    if (!c) throw new AppError('not_found', `no comment ${JSON.stringify(id)} in session ${JSON.stringify(sessionId)}`);
    return toComment(c, placements(sessionId, [c]).get(id)!);
  }

  function reviewDto(r: StoredReview): Review {
    return {
      id: r.id,
      session_id: r.session_id,
      note: r.note,
      mode: r.mode,
      state: r.state,
      comment_ids: store.reviews.commentsOf(r.id).map((c) => c.id),
      created_at: r.created_at,
      delivered_at: r.delivered_at,
      delivered_via: r.delivered_via,
      delivered_to: r.delivered_to,
      text: r.text,
    };
  }

  /** A pending review's text from its note and the comments still waiting in it. */
  function textOf(note: string, comments: StoredComment[]): string {
    return reviewText({ note, comments: comments.filter((c) => c.state === 'pending') }, { maxBytes: maxTextBytes })
      .text;
  }

  /**
   * After a comment of a pending review changed (edited, deleted, addressed): the review's text is
   * rebuilt, or the review removed when nothing is left to send. Delivered reviews never change.
   * Runs inside the caller's transaction; answers what to tell the subscribers once it committed.
   */
  function refreshPending(sessionId: string, reviewId: string | null): () => void {
    const nothing = () => {};
    if (reviewId === null) return nothing;
    const r = store.reviews.review(sessionId, reviewId);
    if (!r || r.state !== 'pending') return nothing;
    const comments = store.reviews.commentsOf(reviewId);
    if (r.note.trim() === '' && !comments.some((c) => c.state === 'pending')) {
      // Comments already addressed keep their state; they only leave the removed review (its
      // foreign key sets their review_id to null).
      store.reviews.deleteReview(sessionId, reviewId);
      return () => {
        for (const c of comments) emitComment(sessionId, c.id);
        emitter.toSession(sessionId, 'review.deleted', { session_id: sessionId, review_id: reviewId });
      };
    }
    store.reviews.setText(sessionId, reviewId, textOf(r.note, comments));
    return () =>
      emitter.toSession(sessionId, 'review.updated', {
        session_id: sessionId,
        review: reviewDto(store.reviews.review(sessionId, reviewId)!),
      });
  }

  function stored(sessionId: string, id: string): StoredComment {
    const c = store.reviews.comment(sessionId, id);
    if (!c) throw new AppError('not_found', `no comment ${JSON.stringify(id)} in session ${JSON.stringify(sessionId)}`);
    return c;
  }

  function checkBody(body: unknown): string {
    if (typeof body !== 'string' || body.trim() === '') throw fieldError('body', 'body must be a non-empty string');
    if (chars(body) > MAX_COMMENT_CHARS)
      throw fieldError('body', `body must be at most ${MAX_COMMENT_CHARS} characters (it has ${chars(body)})`);
    return body;
  }

  function emitComment(sessionId: string, id: string): ReviewComment {
    const comment = commentDto(sessionId, id);
    emitter.toSession(sessionId, 'comment.updated', { session_id: sessionId, comment });
    return comment;
  }

  /** Marks reviews delivered (those still pending) and tells the session's subscribers. */
  function markDelivered(
    sessionId: string,
    reviewIds: readonly string[],
    via: DeliveryChannel,
    to: string | null,
  ): { reviews: Review[]; comments: ReviewComment[] } {
    const at = now();
    const done = store.transaction(() => reviewIds.filter((id) => store.reviews.deliver(sessionId, id, at, via, to)));
    const reviews: Review[] = [];
    const comments: ReviewComment[] = [];
    for (const id of done) {
      const r = reviewDto(store.reviews.review(sessionId, id)!);
      reviews.push(r);
      for (const cid of r.comment_ids) comments.push(emitComment(sessionId, cid));
      emitter.toSession(sessionId, 'review.updated', { session_id: sessionId, review: r });
    }
    return { reviews, comments };
  }

  function inWorkspaces(sessionId: string, workspaces: readonly string[]): boolean {
    const ws = store.sessions.get(sessionId)?.workspace ?? null;
    return ws !== null && workspaces.some((w) => isInside(w, ws));
  }

  const api = {
    /** `GET .../review`: every comment (with where it stands now) and every review, oldest first. */
    view(sessionId: string): SessionReviewResponse {
      sessionOrThrow(sessionId);
      const all = store.reviews.comments(sessionId);
      const where = placements(sessionId, all);
      return {
        comments: all.map((c) => toComment(c, where.get(c.id)!)),
        reviews: store.reviews.reviews(sessionId).map(reviewDto),
      };
    },

    /** A draft comment on lines of one side of a stored change's file; their text is read from the store. */
    createComment(sessionId: string, input: NewCommentBody): ReviewComment {
      sessionOrThrow(sessionId);
      const body = checkBody(input.body);
      if (input.end_line - input.start_line + 1 > MAX_COMMENT_LINES)
        throw fieldError('end_line', `a comment covers at most ${MAX_COMMENT_LINES} lines`);
      const order = store.reviews.changeOrder(sessionId, input.change_id);
      if (!order)
        throw new AppError(
          'not_found',
          `no change ${JSON.stringify(input.change_id)} in session ${JSON.stringify(sessionId)}`,
        );
      const read = readSideLines(store, sessionId, input.change_id, input.file_id, input.side);
      if (read === null)
        throw new AppError(
          'not_found',
          `no file ${JSON.stringify(input.file_id)} in change ${JSON.stringify(input.change_id)}`,
        );
      if (!read.ok) throw fieldError('side', `cannot comment on the ${input.side} side: ${read.message}`);
      const got = linesAt(read.side, input.start_line, input.end_line);
      if (!got.ok)
        throw fieldError(
          'start_line',
          `cannot comment on lines ${input.start_line}-${input.end_line} of the ${input.side} side: ${got.reason}${
            read.provisional ? " (the file's contents are still being stored: try again in a moment)" : ''
          }`,
        );
      const file = store.changes.getFile(sessionId, input.change_id, input.file_id)!;
      const at = now();
      const c: StoredComment = {
        id: randomUUID(),
        session_id: sessionId,
        change_id: input.change_id,
        file_id: input.file_id,
        path: input.side === 'before' && file.old_path !== null ? file.old_path : file.path,
        side: input.side,
        start_line: input.start_line,
        end_line: input.end_line,
        lines: got.lines,
        change_finished_at: order.finished_at,
        change_seq: order.seq,
        body,
        state: 'draft',
        review_id: null,
        created_at: at,
        updated_at: at,
        delivered_at: null,
        delivered_via: null,
        addressed_at: null,
      };
      store.reviews.insertComment(c);
      return emitComment(sessionId, c.id);
    },

    /** A new body; a comment of a pending review changes the text that review will send. */
    editComment(sessionId: string, id: string, body: unknown): ReviewComment {
      sessionOrThrow(sessionId);
      const c = stored(sessionId, id);
      const text = checkBody(body);
      if (c.state === 'delivered' || c.state === 'addressed')
        throw fieldError('body', `the comment was already ${c.state}: what the agent received cannot change`);
      const tell = store.transaction(() => {
        store.reviews.editComment(sessionId, id, text, now());
        return refreshPending(sessionId, c.review_id);
      });
      const comment = emitComment(sessionId, id);
      tell();
      return comment;
    },

    deleteComment(sessionId: string, id: string): void {
      sessionOrThrow(sessionId);
      const c = stored(sessionId, id);
      const tell = store.transaction(() => {
        store.reviews.deleteComment(sessionId, id);
        return refreshPending(sessionId, c.review_id);
      });
      emitter.toSession(sessionId, 'comment.deleted', { session_id: sessionId, comment_id: id });
      tell();
    },

    /** Done: by the person, or by the agent (MCP, REST). */
    address(sessionId: string, id: string): ReviewComment {
      sessionOrThrow(sessionId);
      const c = stored(sessionId, id);
      if (c.state === 'addressed') return commentDto(sessionId, id);
      const tell = store.transaction(() => {
        store.reviews.addressComment(sessionId, id, now());
        return refreshPending(sessionId, c.review_id);
      });
      const comment = emitComment(sessionId, id);
      tell();
      return comment;
    },

    /** "Send to agent": every draft of the session goes pending in one new review. */
    send(sessionId: string, input: { note?: unknown; mode?: unknown }): { review: Review; comments: ReviewComment[] } {
      sessionOrThrow(sessionId);
      const note = input.note ?? '';
      if (typeof note !== 'string') throw fieldError('note', 'note must be a string');
      if (chars(note) > MAX_REVIEW_NOTE_CHARS)
        throw fieldError('note', `note must be at most ${MAX_REVIEW_NOTE_CHARS} characters (it has ${chars(note)})`);
      const mode = input.mode ?? 'next_prompt';
      if (mode !== 'next_prompt' && mode !== 'now') throw fieldError('mode', 'mode must be "next_prompt" or "now"');
      const drafts = store.reviews.comments(sessionId).filter((c) => c.state === 'draft');
      if (drafts.length === 0 && note.trim() === '')
        throw fieldError('note', 'nothing to send: no draft comment and no note');
      const id = randomUUID();
      const text = textOf(
        note,
        drafts.map((d) => ({ ...d, state: 'pending' as const })),
      );
      store.transaction(() =>
        store.reviews.insertReview({
          id,
          session_id: sessionId,
          note,
          mode: mode as DeliveryMode,
          state: 'pending',
          text,
          created_at: now(),
          delivered_at: null,
          delivered_via: null,
          delivered_to: null,
        }),
      );
      const comments = drafts.map((d) => emitComment(sessionId, d.id));
      const review = reviewDto(store.reviews.review(sessionId, id)!);
      emitter.toSession(sessionId, 'review.updated', { session_id: sessionId, review });
      return { review, comments };
    },

    /** A REST caller says it handed a pending review to its agent. */
    deliveredByRest(
      sessionId: string,
      reviewId: string,
      agent: string | null,
    ): { review: Review; comments: ReviewComment[] } {
      sessionOrThrow(sessionId);
      const r = store.reviews.review(sessionId, reviewId);
      if (!r)
        throw new AppError(
          'not_found',
          `no review ${JSON.stringify(reviewId)} in session ${JSON.stringify(sessionId)}`,
        );
      if (r.state === 'pending') markDelivered(sessionId, [reviewId], 'rest', agent);
      const review = reviewDto(store.reviews.review(sessionId, reviewId)!);
      return { review, comments: review.comment_ids.map((cid) => commentDto(sessionId, cid)) };
    },

    /**
     * The pending reviews a delivery would carry (oldest first, as many as fit in one bounded text;
     * the others wait for the next one), without marking them: `markDelivered` does that once the
     * answer has really gone out. `nowOnly`: only reviews sent with mode `now`.
     */
    pendingDelivery(sessionId: string, opts: { nowOnly?: boolean } = {}): Delivery | null {
      const pending = store.reviews.pending(sessionId).filter((r) => !opts.nowOnly || r.mode === 'now');
      if (pending.length === 0) return null;
      const taken: StoredReview[] = [];
      let bytes = 0;
      for (const r of pending) {
        const add = Buffer.byteLength(r.text, 'utf8') + (taken.length > 0 ? REVIEW_SEPARATOR.length : 0);
        if (taken.length > 0 && bytes + add > maxTextBytes) break;
        taken.push(r);
        bytes += add;
      }
      const reviews = taken.map(reviewDto);
      return {
        session_id: sessionId,
        text: taken.map((r) => r.text).join(REVIEW_SEPARATOR),
        reviews,
        comments: reviews.flatMap((r) => r.comment_ids.map((cid) => commentDto(sessionId, cid))),
      };
    },

    markDelivered,

    /**
     * Every pending review of the sessions working in `workspaces` (a session's workspace is one of
     * them or inside one), one delivery per session, marked delivered by `via` to `to`.
     */
    deliverTo(workspaces: readonly string[], via: DeliveryChannel, to: string | null): Delivery[] {
      const out: Delivery[] = [];
      for (const sessionId of store.reviews.sessionsWithPending()) {
        if (!inWorkspaces(sessionId, workspaces)) continue;
        const d = api.pendingDelivery(sessionId);
        if (!d) continue;
        const done = markDelivered(
          sessionId,
          d.reviews.map((r) => r.id),
          via,
          to,
        );
        out.push({ ...d, reviews: done.reviews, comments: done.comments });
      }
      return out;
    },

    /** Marks comments of sessions working in `workspaces` addressed; ids not found there are listed back. */
    addressIn(
      workspaces: readonly string[],
      ids: readonly string[],
    ): { comments: ReviewComment[]; not_found: string[] } {
      const comments: ReviewComment[] = [];
      const notFound: string[] = [];
      for (const id of ids) {
        const c = store.reviews.commentById(id);
        if (!c || !inWorkspaces(c.session_id, workspaces)) notFound.push(id);
        else comments.push(api.address(c.session_id, id));
      }
      return { comments, not_found: notFound };
    },
  };
  return api;
}

export type Reviews = ReturnType<typeof createReviews>;
