import type {
  ChangeType,
  CommentSide,
  CommentState,
  DeliveryChannel,
  DeliveryMode,
  ReviewState,
} from '../../shared/index.ts';
import type { Db } from './database.ts';
import type { WriteClock } from './write-clock.ts';

/**
 * Review comments and the reviews that send them (migration 0006). Rows only: where a comment sits
 * now, and the text a review carries, are worked out above the store.
 */

/** A comment as stored: where it was written, its text, and how far it got. */
export interface StoredComment {
  id: string;
  session_id: string;
  change_id: string;
  file_id: string;
  path: string;
  side: CommentSide;
  start_line: number;
  end_line: number;
  lines: string[];
  /** The anchored change's place in the session's order: its finish, then its seq. */
  change_finished_at: number;
  change_seq: number;
  body: string;
  state: CommentState;
  review_id: string | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
  delivered_via: DeliveryChannel | null;
  addressed_at: number | null;
}

export interface StoredReview {
  id: string;
  session_id: string;
  note: string;
  mode: DeliveryMode;
  state: ReviewState;
  text: string;
  created_at: number;
  delivered_at: number | null;
  delivered_via: DeliveryChannel | null;
  delivered_to: string | null;
}

/** A stored file row of a session that touched a path: what re-anchoring follows. */
export interface PathTouch {
  change_id: string;
  file_id: string;
  path: string;
  old_path: string | null;
  change_type: ChangeType;
  finished_at: number;
  seq: number;
}

/** Where a stored change sits in its session's order. */
export interface ChangeOrder {
  finished_at: number;
  seq: number;
}

type CommentRow = Omit<StoredComment, 'lines'> & { lines: string };

const COMMENT_COLUMNS = `id, session_id, change_id, file_id, path, side, start_line, end_line, lines,
  change_finished_at, change_seq, body, state, review_id, created_at, updated_at, delivered_at, delivered_via,
  addressed_at`;
const REVIEW_COLUMNS = 'id, session_id, note, mode, state, text, created_at, delivered_at, delivered_via, delivered_to';

const toComment = (r: CommentRow): StoredComment => ({ ...r, lines: JSON.parse(r.lines) as string[] });

// A change's order key: when it finished (its creation when no finish was recorded), then its seq.
const FINISH = 'COALESCE(c.finished_at, c.created_at)';

export function createReviewStore(db: Db, clock: WriteClock) {
  const listComments = db.prepare<[string], CommentRow>(
    `SELECT ${COMMENT_COLUMNS} FROM review_comments WHERE session_id = ? ORDER BY seq`,
  );
  const getComment = db.prepare<[string, string], CommentRow>(
    `SELECT ${COMMENT_COLUMNS} FROM review_comments WHERE session_id = ? AND id = ?`,
  );
  const getCommentById = db.prepare<[string], CommentRow>(
    `SELECT ${COMMENT_COLUMNS} FROM review_comments WHERE id = ?`,
  );
  const insertComment = db.prepare(
    `INSERT INTO review_comments (${COMMENT_COLUMNS}) VALUES (@id, @session_id, @change_id, @file_id, @path, @side,
       @start_line, @end_line, @lines, @change_finished_at, @change_seq, @body, @state, @review_id, @created_at,
       @updated_at, @delivered_at, @delivered_via, @addressed_at)`,
  );
  const updateBody = db.prepare<[string, number, string, string]>(
    'UPDATE review_comments SET body = ?, updated_at = ? WHERE session_id = ? AND id = ?',
  );
  const deleteComment = db.prepare<[string, string]>('DELETE FROM review_comments WHERE session_id = ? AND id = ?');
  const markAddressed = db.prepare<{ at: number; session_id: string; id: string }>(
    `UPDATE review_comments SET state = 'addressed', addressed_at = @at, updated_at = @at
     WHERE session_id = @session_id AND id = @id`,
  );
  const drafts = db
    .prepare<[string], string>(`SELECT id FROM review_comments WHERE session_id = ? AND state = 'draft' ORDER BY seq`)
    .pluck();
  const attach = db.prepare<[string, number, string]>(
    `UPDATE review_comments SET state = 'pending', review_id = ?, updated_at = ? WHERE session_id = ? AND state = 'draft'`,
  );
  const commentsOfReview = db.prepare<[string], CommentRow>(
    `SELECT ${COMMENT_COLUMNS} FROM review_comments WHERE review_id = ? ORDER BY seq`,
  );
  const deliverComments = db.prepare<{ at: number; via: string; review_id: string }>(
    `UPDATE review_comments SET state = 'delivered', delivered_at = @at, delivered_via = @via, updated_at = @at
     WHERE review_id = @review_id AND state = 'pending'`,
  );

  const listReviews = db.prepare<[string], StoredReview>(
    `SELECT ${REVIEW_COLUMNS} FROM reviews WHERE session_id = ? ORDER BY seq`,
  );
  const getReview = db.prepare<[string, string], StoredReview>(
    `SELECT ${REVIEW_COLUMNS} FROM reviews WHERE session_id = ? AND id = ?`,
  );
  const pendingOfSession = db.prepare<[string], StoredReview>(
    `SELECT ${REVIEW_COLUMNS} FROM reviews WHERE session_id = ? AND state = 'pending' ORDER BY created_at, seq`,
  );
  const pendingSessions = db
    .prepare<[], string>(`SELECT DISTINCT session_id FROM reviews WHERE state = 'pending'`)
    .pluck();
  const insertReview = db.prepare(
    `INSERT INTO reviews (${REVIEW_COLUMNS}) VALUES (@id, @session_id, @note, @mode, @state, @text, @created_at,
       @delivered_at, @delivered_via, @delivered_to)`,
  );
  const moveComment = db.prepare<[string, string, string]>(
    `UPDATE review_comments SET review_id = ? WHERE review_id = ? AND id = ? AND state = 'pending'`,
  );
  const setText = db.prepare<[string, string]>(`UPDATE reviews SET text = ? WHERE id = ? AND state = 'pending'`);
  const deliverReview = db.prepare<[number, string, string | null, string]>(
    `UPDATE reviews SET state = 'delivered', delivered_at = ?, delivered_via = ?, delivered_to = ?
     WHERE id = ? AND state = 'pending'`,
  );
  const deleteReview = db.prepare<[string]>('DELETE FROM reviews WHERE id = ?');

  const changeOrder = db.prepare<[string, string], ChangeOrder>(
    `SELECT ${FINISH} AS finished_at, c.seq AS seq FROM workspace_run_changes c WHERE c.session_id = ? AND c.change_id = ?`,
  );
  const touchesByPath = db.prepare<[string, string], PathTouch>(
    `SELECT f.change_id, f.id AS file_id, f.path, f.old_path, f.change_type, ${FINISH} AS finished_at, c.seq AS seq
     FROM workspace_run_change_files f
     JOIN workspace_run_changes c ON c.session_id = f.session_id AND c.change_id = f.change_id
     WHERE f.session_id = ? AND f.path = ?`,
  );
  const touchesByOldPath = db.prepare<[string, string], PathTouch>(
    `SELECT f.change_id, f.id AS file_id, f.path, f.old_path, f.change_type, ${FINISH} AS finished_at, c.seq AS seq
     FROM workspace_run_change_files f
     JOIN workspace_run_changes c ON c.session_id = f.session_id AND c.change_id = f.change_id
     WHERE f.session_id = ? AND f.old_path = ?`,
  );

  return {
    comments(sessionId: string): StoredComment[] {
      return listComments.all(sessionId).map(toComment);
    },
    comment(sessionId: string, id: string): StoredComment | null {
      const row = getComment.get(sessionId, id);
      return row ? toComment(row) : null;
    },
    /** A comment by its id alone (ids are unique across sessions). */
    commentById(id: string): StoredComment | null {
      const row = getCommentById.get(id);
      return row ? toComment(row) : null;
    },
    insertComment(c: StoredComment): void {
      clock.bump(c.session_id);
      insertComment.run({ ...c, lines: JSON.stringify(c.lines) });
    },
    editComment(sessionId: string, id: string, body: string, now: number): void {
      clock.bump(sessionId);
      updateBody.run(body, now, sessionId, id);
    },
    deleteComment(sessionId: string, id: string): boolean {
      clock.bump(sessionId);
      return deleteComment.run(sessionId, id).changes > 0;
    },
    addressComment(sessionId: string, id: string, now: number): void {
      clock.bump(sessionId);
      markAddressed.run({ at: now, session_id: sessionId, id });
    },
    draftIds(sessionId: string): string[] {
      return drafts.all(sessionId);
    },
    /** Stores a pending review and moves every draft comment of its session into it. */
    insertReview(r: StoredReview): void {
      clock.bump(r.session_id);
      insertReview.run(r);
      attach.run(r.id, r.created_at, r.session_id);
    },
    /** Stores `r` and moves those pending comments of review `fromId` into it. */
    splitReview(sessionId: string, fromId: string, r: StoredReview, commentIds: readonly string[]): void {
      clock.bump(sessionId);
      insertReview.run(r);
      for (const id of commentIds) moveComment.run(r.id, fromId, id);
    },
    reviews(sessionId: string): StoredReview[] {
      return listReviews.all(sessionId);
    },
    review(sessionId: string, id: string): StoredReview | null {
      return getReview.get(sessionId, id) ?? null;
    },
    commentsOf(reviewId: string): StoredComment[] {
      return commentsOfReview.all(reviewId).map(toComment);
    },
    pending(sessionId: string): StoredReview[] {
      return pendingOfSession.all(sessionId);
    },
    /** Sessions with a review waiting for delivery. */
    sessionsWithPending(): string[] {
      return pendingSessions.all();
    },
    /** A pending review's text, rebuilt after one of its comments changed (a delivered text never changes). */
    setText(sessionId: string, id: string, text: string): void {
      clock.bump(sessionId);
      setText.run(text, id);
    },
    /** Marks a pending review and its pending comments delivered; false when it was not pending any more. */
    deliver(sessionId: string, id: string, at: number, via: DeliveryChannel, to: string | null): boolean {
      clock.bump(sessionId);
      if (deliverReview.run(at, via, to, id).changes === 0) return false;
      deliverComments.run({ at, via, review_id: id });
      return true;
    },
    deleteReview(sessionId: string, id: string): void {
      clock.bump(sessionId);
      deleteReview.run(id);
    },
    /** A stored change's place in its session's order; null when it is not stored. */
    changeOrder(sessionId: string, changeId: string): ChangeOrder | null {
      return changeOrder.get(sessionId, changeId) ?? null;
    },
    /** Every stored file row of a session whose path, or whose name before a rename, is `path`. */
    touches(sessionId: string, path: string): PathTouch[] {
      return [...touchesByPath.all(sessionId, path), ...touchesByOldPath.all(sessionId, path)];
    },
  };
}

export type ReviewStore = ReturnType<typeof createReviewStore>;
