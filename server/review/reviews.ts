import { randomUUID } from 'node:crypto';
import {
  MAX_COMMENT_CHARS,
  MAX_COMMENT_LINES,
  MAX_REVIEW_NOTE_CHARS,
  type DeliveryChannel,
  type NewCommentBody,
  type Review,
  type ReviewComment,
  type SessionReviewResponse,
} from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { isInside } from '../paths/index.ts';
import type { RecorderEmitter } from '../runs/index.ts';
import type { Store, StoreTx, StoredComment, StoredReview } from '../store/index.ts';
import { linesAt, type Reanchored } from './anchor.ts';
import { createPlacements } from './placement.ts';
import { createReviewReaders, type HookAgents, type ReviewReaders } from './reader.ts';
import { readSideLines } from './side-lines.ts';
import { DEFAULT_TEXT_BOUND, reviewText, sizeIn, type TextBound } from './text.ts';

/**
 * Review comments and reviews of a session: writing them (the REST routes), where each comment
 * stands after later changes (computed when read, cached until the session is written again), and
 * handing pending reviews to the agent (its hooks, MCP, or a REST caller) exactly once.
 */

export interface ReviewsDeps {
  store: Store;
  emitter: Pick<RecorderEmitter, 'toSession'>;
  now?: () => number;
  /** The bound of deliveries that name none (MCP, REST) and of a pending review's stored text; tests pass small values. */
  textBound?: TextBound;
}

/**
 * What a delivery carries of one pending review: its text as sent, and the comments in that text.
 * The review's other pending comments are not delivered: they go on in a new pending review.
 */
export interface DeliveryPart {
  review_id: string;
  text: string;
  comment_ids: string[];
}

/** A delivery about to be sent: the text (the parts' texts joined) and what it carries. */
export interface PendingDelivery {
  session_id: string;
  text: string;
  parts: DeliveryPart[];
}

/** What one delivery handed the agent: the texts of the reviews it carried, joined, and which they are. */
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
  const defaultBound = deps.textBound ?? DEFAULT_TEXT_BOUND;
  const placements = createPlacements(store);

  async function sessionOrThrow(s: StoreTx, sessionId: string): Promise<void> {
    if (!(await s.sessions.exists(sessionId)))
      throw new AppError('not_found', `no session ${JSON.stringify(sessionId)}`);
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

  // Placements read through the store itself: call these only outside a transaction.
  async function commentDto(sessionId: string, id: string): Promise<ReviewComment> {
    const c = await store.reviews.comment(sessionId, id);
    if (!c) throw new AppError('not_found', `no comment ${JSON.stringify(id)} in session ${JSON.stringify(sessionId)}`);
    return toComment(c, (await placements(sessionId, [c])).get(id)!);
  }

  async function reviewDto(s: StoreTx, r: StoredReview): Promise<Review> {
    return {
      id: r.id,
      session_id: r.session_id,
      note: r.note,
      mode: r.mode,
      state: r.state,
      comment_ids: (await s.reviews.commentsOf(r.id)).map((c) => c.id),
      created_at: r.created_at,
      delivered_at: r.delivered_at,
      delivered_via: r.delivered_via,
      delivered_to: r.delivered_to,
      text: r.text,
    };
  }

  /** A pending review's text from its note and the comments still waiting in it. */
  function textOf(note: string, comments: StoredComment[]): string {
    return reviewText({ note, comments: comments.filter((c) => c.state === 'pending') }, { bound: defaultBound }).text;
  }

  /**
   * After a comment of a pending review changed (edited, deleted, addressed): the review's text is
   * rebuilt, or the review removed when nothing is left to send. Delivered reviews never change.
   * Runs inside the caller's transaction (`tx`); answers what to tell the subscribers once it committed.
   */
  async function refreshPending(tx: StoreTx, sessionId: string, reviewId: string | null): Promise<() => Promise<void>> {
    const nothing = async () => {};
    if (reviewId === null) return nothing;
    const r = await tx.reviews.review(sessionId, reviewId);
    if (!r || r.state !== 'pending') return nothing;
    const comments = await tx.reviews.commentsOf(reviewId);
    if (r.note.trim() === '' && !comments.some((c) => c.state === 'pending')) {
      // Comments already addressed keep their state; they only leave the removed review (its
      // foreign key sets their review_id to null).
      await tx.reviews.deleteReview(sessionId, reviewId);
      return async () => {
        for (const c of comments) await emitComment(sessionId, c.id);
        emitter.toSession(sessionId, 'review.deleted', { session_id: sessionId, review_id: reviewId });
      };
    }
    await tx.reviews.setText(sessionId, reviewId, textOf(r.note, comments));
    return async () =>
      emitter.toSession(sessionId, 'review.updated', {
        session_id: sessionId,
        review: await reviewDto(store, (await store.reviews.review(sessionId, reviewId))!),
      });
  }

  async function stored(s: StoreTx, sessionId: string, id: string): Promise<StoredComment> {
    const c = await s.reviews.comment(sessionId, id);
    if (!c) throw new AppError('not_found', `no comment ${JSON.stringify(id)} in session ${JSON.stringify(sessionId)}`);
    return c;
  }

  function checkBody(body: unknown): string {
    if (typeof body !== 'string' || body.trim() === '') throw fieldError('body', 'body must be a non-empty string');
    if (chars(body) > MAX_COMMENT_CHARS)
      throw fieldError('body', `body must be at most ${MAX_COMMENT_CHARS} characters (it has ${chars(body)})`);
    return body;
  }

  async function emitComment(sessionId: string, id: string): Promise<ReviewComment> {
    const comment = await commentDto(sessionId, id);
    emitter.toSession(sessionId, 'comment.updated', { session_id: sessionId, comment });
    return comment;
  }

  /** What a delivery within `bound` would carry of pending review `r`, and whether that is all of it. */
  async function partOf(
    s: StoreTx,
    r: StoredReview,
    bound: TextBound,
  ): Promise<{ part: DeliveryPart; whole: boolean }> {
    const comments = (await s.reviews.commentsOf(r.id)).filter((c) => c.state === 'pending');
    const out = reviewText({ note: r.note, comments }, { bound });
    return {
      part: { review_id: r.id, text: out.text, comment_ids: comments.slice(0, out.included).map((c) => c.id) },
      whole: out.omitted === 0 && !out.cut,
    };
  }

  /**
   * Marks what a delivery carried delivered (reviews still pending) and tells the session's
   * subscribers. Each review's text becomes the part that was sent; its pending comments that were
   * not in that part move, in the same transaction, to a new pending review (no note, the same mode
   * and sending time) that the next delivery carries: a comment is delivered only once the agent got it.
   */
  async function markDelivered(
    sessionId: string,
    parts: readonly DeliveryPart[],
    via: DeliveryChannel,
    to: string | null,
  ): Promise<{ reviews: Review[]; comments: ReviewComment[] }> {
    const at = now();
    const done = await store.transaction(async (tx) => {
      const marked: string[] = [];
      const split: { id: string; moved: string[] }[] = [];
      for (const p of parts) {
        const r = await tx.reviews.review(sessionId, p.review_id);
        if (!r || r.state !== 'pending') continue;
        const rest = (await tx.reviews.commentsOf(r.id)).filter(
          (c) => c.state === 'pending' && !p.comment_ids.includes(c.id),
        );
        if (rest.length > 0) {
          const id = randomUUID();
          await tx.reviews.splitReview(
            sessionId,
            r.id,
            {
              id,
              session_id: sessionId,
              note: '',
              mode: r.mode,
              state: 'pending',
              text: textOf('', rest),
              created_at: r.created_at,
              delivered_at: null,
              delivered_via: null,
              delivered_to: null,
            },
            rest.map((c) => c.id),
          );
          split.push({ id, moved: rest.map((c) => c.id) });
        }
        await tx.reviews.setText(sessionId, r.id, p.text);
        if (await tx.reviews.deliver(sessionId, r.id, at, via, to)) marked.push(r.id);
      }
      return { marked, split };
    });
    const reviews: Review[] = [];
    const comments: ReviewComment[] = [];
    for (const id of done.marked) {
      const r = await reviewDto(store, (await store.reviews.review(sessionId, id))!);
      reviews.push(r);
      for (const cid of r.comment_ids) comments.push(await emitComment(sessionId, cid));
      emitter.toSession(sessionId, 'review.updated', { session_id: sessionId, review: r });
    }
    for (const { id, moved } of done.split) {
      for (const cid of moved) await emitComment(sessionId, cid);
      const r = await store.reviews.review(sessionId, id);
      if (r)
        emitter.toSession(sessionId, 'review.updated', { session_id: sessionId, review: await reviewDto(store, r) });
    }
    return { reviews, comments };
  }

  async function inWorkspaces(sessionId: string, workspaces: readonly string[]): Promise<boolean> {
    const ws = (await store.sessions.get(sessionId))?.workspace ?? null;
    return ws !== null && workspaces.some((w) => isInside(w, ws));
  }

  /** Checks a new comment against the stored rows and stores it as a draft (inside `tx`). */
  async function newComment(tx: StoreTx, sessionId: string, input: NewCommentBody): Promise<StoredComment> {
    await sessionOrThrow(tx, sessionId);
    const body = checkBody(input.body);
    if (input.end_line - input.start_line + 1 > MAX_COMMENT_LINES)
      throw fieldError('end_line', `a comment covers at most ${MAX_COMMENT_LINES} lines`);
    const order = await tx.reviews.changeOrder(sessionId, input.change_id);
    if (!order)
      throw new AppError(
        'not_found',
        `no change ${JSON.stringify(input.change_id)} in session ${JSON.stringify(sessionId)}`,
      );
    const read = await readSideLines(tx, sessionId, input.change_id, input.file_id, input.side);
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
    const file = (await tx.changes.getFile(sessionId, input.change_id, input.file_id))!;
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
    await tx.reviews.insertComment(c);
    return c;
  }

  async function address(sessionId: string, id: string): Promise<ReviewComment> {
    const tell = await store.transaction(async (tx) => {
      await sessionOrThrow(tx, sessionId);
      const c = await stored(tx, sessionId, id);
      if (c.state === 'addressed') return null;
      await tx.reviews.addressComment(sessionId, id, now());
      return refreshPending(tx, sessionId, c.review_id);
    });
    if (!tell) return commentDto(sessionId, id);
    const comment = await emitComment(sessionId, id);
    await tell();
    return comment;
  }

  /**
   * What a delivery within `bound` would carry (pending reviews oldest first: the first as far as it
   * fits, then whole ones while they fit; the rest wait for the next one), without marking it:
   * `markDelivered` does that once the answer has really gone out. `nowOnly`: only reviews sent with
   * mode `now`.
   */
  async function pendingDelivery(
    sessionId: string,
    opts: { nowOnly?: boolean; bound?: TextBound } = {},
  ): Promise<PendingDelivery | null> {
    const bound = opts.bound ?? defaultBound;
    const pending = (await store.reviews.pending(sessionId)).filter((r) => !opts.nowOnly || r.mode === 'now');
    const parts: DeliveryPart[] = [];
    let used = 0;
    for (const r of pending) {
      const { part, whole } = await partOf(store, r, bound);
      const add = sizeIn(bound.unit, part.text) + (parts.length > 0 ? sizeIn(bound.unit, REVIEW_SEPARATOR) : 0);
      if (parts.length > 0 && (!whole || used + add > bound.max)) break;
      parts.push(part);
      used += add;
      if (!whole) break;
    }
    if (parts.length === 0) return null;
    return { session_id: sessionId, text: parts.map((p) => p.text).join(REVIEW_SEPARATOR), parts };
  }

  const api = {
    /** Who reads the sessions' reviews, given what the hooks can carry (`reader.ts`). */
    readers: (hooks: HookAgents): ReviewReaders => createReviewReaders({ hooks, store }),
    /** `GET .../review`: every comment (with where it stands now) and every review, oldest first. */
    async view(sessionId: string): Promise<SessionReviewResponse> {
      await sessionOrThrow(store, sessionId);
      const all = await store.reviews.comments(sessionId);
      const where = await placements(sessionId, all);
      const reviews: Review[] = [];
      for (const r of await store.reviews.reviews(sessionId)) reviews.push(await reviewDto(store, r));
      return { comments: all.map((c) => toComment(c, where.get(c.id)!)), reviews };
    },

    /** A draft comment on lines of one side of a stored change's file; their text is read from the store. */
    async createComment(sessionId: string, input: NewCommentBody): Promise<ReviewComment> {
      // The checks and the insert in one transaction: the lines quoted are those of the stored rows.
      const c = await store.transaction((tx) => newComment(tx, sessionId, input));
      return emitComment(sessionId, c.id);
    },

    /** A new body; a comment of a pending review changes the text that review will send. */
    async editComment(sessionId: string, id: string, body: unknown): Promise<ReviewComment> {
      const tell = await store.transaction(async (tx) => {
        await sessionOrThrow(tx, sessionId);
        const c = await stored(tx, sessionId, id);
        const text = checkBody(body);
        if (c.state === 'delivered' || c.state === 'addressed')
          throw fieldError('body', `the comment was already ${c.state}: what the agent received cannot change`);
        await tx.reviews.editComment(sessionId, id, text, now());
        return refreshPending(tx, sessionId, c.review_id);
      });
      const comment = await emitComment(sessionId, id);
      await tell();
      return comment;
    },

    async deleteComment(sessionId: string, id: string): Promise<void> {
      const tell = await store.transaction(async (tx) => {
        await sessionOrThrow(tx, sessionId);
        const c = await stored(tx, sessionId, id);
        await tx.reviews.deleteComment(sessionId, id);
        return refreshPending(tx, sessionId, c.review_id);
      });
      emitter.toSession(sessionId, 'comment.deleted', { session_id: sessionId, comment_id: id });
      await tell();
    },

    /** Done: by the person, or by the agent (MCP, REST). */
    address: (sessionId: string, id: string): Promise<ReviewComment> => address(sessionId, id),

    /** "Send to agent": every draft of the session goes pending in one new review. */
    async send(
      sessionId: string,
      input: { note?: unknown; mode?: unknown },
    ): Promise<{ review: Review; comments: ReviewComment[] }> {
      const { id, drafts } = await store.transaction(async (tx) => {
        await sessionOrThrow(tx, sessionId);
        const note = input.note ?? '';
        if (typeof note !== 'string') throw fieldError('note', 'note must be a string');
        if (chars(note) > MAX_REVIEW_NOTE_CHARS)
          throw fieldError('note', `note must be at most ${MAX_REVIEW_NOTE_CHARS} characters (it has ${chars(note)})`);
        const mode = input.mode ?? 'next_prompt';
        if (mode !== 'next_prompt' && mode !== 'now') throw fieldError('mode', 'mode must be "next_prompt" or "now"');
        const drafts = (await tx.reviews.comments(sessionId)).filter((c) => c.state === 'draft');
        if (drafts.length === 0 && note.trim() === '')
          throw fieldError('note', 'nothing to send: no draft comment and no note');
        const id = randomUUID();
        const text = textOf(
          note,
          drafts.map((d) => ({ ...d, state: 'pending' as const })),
        );
        await tx.reviews.insertReview({
          id,
          session_id: sessionId,
          note,
          mode: mode,
          state: 'pending',
          text,
          created_at: now(),
          delivered_at: null,
          delivered_via: null,
          delivered_to: null,
        });
        return { id, drafts };
      });
      const comments: ReviewComment[] = [];
      for (const d of drafts) comments.push(await emitComment(sessionId, d.id));
      const review = await reviewDto(store, (await store.reviews.review(sessionId, id))!);
      emitter.toSession(sessionId, 'review.updated', { session_id: sessionId, review });
      return { review, comments };
    },

    /** A REST caller says it handed a pending review to its agent. */
    async deliveredByRest(
      sessionId: string,
      reviewId: string,
      agent: string | null,
    ): Promise<{ review: Review; comments: ReviewComment[] }> {
      await sessionOrThrow(store, sessionId);
      const r = await store.reviews.review(sessionId, reviewId);
      if (!r)
        throw new AppError(
          'not_found',
          `no review ${JSON.stringify(reviewId)} in session ${JSON.stringify(sessionId)}`,
        );
      if (r.state === 'pending')
        await markDelivered(sessionId, [(await partOf(store, r, defaultBound)).part], 'rest', agent);
      const review = await reviewDto(store, (await store.reviews.review(sessionId, reviewId))!);
      const comments: ReviewComment[] = [];
      for (const cid of review.comment_ids) comments.push(await commentDto(sessionId, cid));
      return { review, comments };
    },

    pendingDelivery,

    markDelivered,

    /**
     * Every pending review of the sessions working in `workspaces` (a session's workspace is one of
     * them or inside one), one delivery per session, marked delivered by `via` to `to`. A delivery
     * carries only the reviews this call marked (another caller may have taken some meanwhile).
     */
    async deliverTo(workspaces: readonly string[], via: DeliveryChannel, to: string | null): Promise<Delivery[]> {
      const out: Delivery[] = [];
      for (const sessionId of await store.reviews.sessionsWithPending()) {
        if (!(await inWorkspaces(sessionId, workspaces))) continue;
        const d = await pendingDelivery(sessionId);
        if (!d) continue;
        const done = await markDelivered(sessionId, d.parts, via, to);
        if (done.reviews.length === 0) continue;
        out.push({
          session_id: sessionId,
          text: done.reviews.map((r) => r.text).join(REVIEW_SEPARATOR),
          reviews: done.reviews,
          comments: done.comments,
        });
      }
      return out;
    },

    /** Marks comments of sessions working in `workspaces` addressed; ids not found there are listed back. */
    async addressIn(
      workspaces: readonly string[],
      ids: readonly string[],
    ): Promise<{ comments: ReviewComment[]; not_found: string[] }> {
      const comments: ReviewComment[] = [];
      const notFound: string[] = [];
      for (const id of ids) {
        const c = await store.reviews.commentById(id);
        if (!c || !(await inWorkspaces(c.session_id, workspaces))) notFound.push(id);
        else comments.push(await address(c.session_id, id));
      }
      return { comments, not_found: notFound };
    },
  };
  return api;
}

export type Reviews = ReturnType<typeof createReviews>;
