import type {
  ChangeType,
  CommentSide,
  CommentState,
  DeliveryChannel,
  DeliveryMode,
  ReviewState,
} from '../../shared/index.ts';
import { chunks, inList } from './batches.ts';
import type { WriteClock } from './sql/clock.ts';
import type { Param, Sql } from './sql/types.ts';
import type { ReviewsApi } from './types.ts';

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

const COMMENT_FIELDS = [
  'id',
  'session_id',
  'change_id',
  'file_id',
  'path',
  'side',
  'start_line',
  'end_line',
  'lines',
  'change_finished_at',
  'change_seq',
  'body',
  'state',
  'review_id',
  'created_at',
  'updated_at',
  'delivered_at',
  'delivered_via',
  'addressed_at',
] as const satisfies readonly (keyof StoredComment)[];
const REVIEW_FIELDS = [
  'id',
  'session_id',
  'note',
  'mode',
  'state',
  'text',
  'created_at',
  'delivered_at',
  'delivered_via',
  'delivered_to',
] as const satisfies readonly (keyof StoredReview)[];
const COMMENT_COLUMNS = COMMENT_FIELDS.join(', ');
const REVIEW_COLUMNS = REVIEW_FIELDS.join(', ');

const toComment = (r: CommentRow): StoredComment => ({ ...r, lines: JSON.parse(r.lines) as string[] });

// A change's order key: when it finished (its creation when no finish was recorded), then its seq.
const FINISH = 'COALESCE(c.finished_at, c.created_at)';
const touches = (column: 'path' | 'old_path') =>
  `SELECT f.change_id, f.id AS file_id, f.path, f.old_path, f.change_type, ${FINISH} AS finished_at, c.seq AS seq
   FROM workspace_run_change_files f
   JOIN workspace_run_changes c ON c.session_id = f.session_id AND c.change_id = f.change_id
   WHERE f.session_id = ? AND f.${column} = ?`;

const SQL = {
  comments: (where: string) => `SELECT ${COMMENT_COLUMNS} FROM review_comments WHERE ${where}`,
  reviews: (where: string) => `SELECT ${REVIEW_COLUMNS} FROM reviews WHERE ${where}`,
  insertComment: `INSERT INTO review_comments (${COMMENT_COLUMNS}) VALUES (${inList(COMMENT_FIELDS.length)})`,
  updateBody: 'UPDATE review_comments SET body = ?, updated_at = ? WHERE session_id = ? AND id = ?',
  deleteComment: 'DELETE FROM review_comments WHERE session_id = ? AND id = ?',
  markAddressed: `UPDATE review_comments SET state = 'addressed', addressed_at = ?, updated_at = ?
     WHERE session_id = ? AND id = ?`,
  drafts: `SELECT id FROM review_comments WHERE session_id = ? AND state = 'draft' ORDER BY seq`,
  attach: `UPDATE review_comments SET state = 'pending', review_id = ?, updated_at = ?
     WHERE session_id = ? AND state = 'draft'`,
  move: (n: number) =>
    `UPDATE review_comments SET review_id = ? WHERE review_id = ? AND id IN (${inList(n)}) AND state = 'pending'`,
  deliverComments: `UPDATE review_comments SET state = 'delivered', delivered_at = ?, delivered_via = ?, updated_at = ?
     WHERE review_id = ? AND state = 'pending'`,
  pendingSessions: `SELECT DISTINCT session_id FROM reviews WHERE state = 'pending'`,
  insertReview: `INSERT INTO reviews (${REVIEW_COLUMNS}) VALUES (${inList(REVIEW_FIELDS.length)})`,
  setText: `UPDATE reviews SET text = ? WHERE id = ? AND state = 'pending'`,
  deliverReview: `UPDATE reviews SET state = 'delivered', delivered_at = ?, delivered_via = ?, delivered_to = ?
     WHERE id = ? AND state = 'pending'`,
  deleteReview: 'DELETE FROM reviews WHERE id = ?',
  changeOrder: `SELECT ${FINISH} AS finished_at, c.seq AS seq FROM workspace_run_changes c
     WHERE c.session_id = ? AND c.change_id = ?`,
  touchesByPath: touches('path'),
  touchesByOldPath: touches('old_path'),
};

const reviewParams = (r: StoredReview): Param[] => REVIEW_FIELDS.map((k) => r[k]);
const commentParams = (c: StoredComment): Param[] =>
  COMMENT_FIELDS.map((k) => (k === 'lines' ? JSON.stringify(c.lines) : c[k]));
// Ids moved per statement.
const IDS_PER_MOVE = 500;

/** The review store over `sql` (the top-level executor, or one bound to an open transaction). */
export function createReviewStore(sql: Sql, clock: WriteClock): ReviewsApi {
  const comments = async (where: string, params: Param[]) =>
    (await sql.all<CommentRow>(SQL.comments(where), params)).map(toComment);
  const reviews = (where: string, params: Param[]) => sql.all<StoredReview>(SQL.reviews(where), params);
  /** One write of the session's rows, with its clock move, as one step. */
  const write = <T>(sessionId: string, fn: (q: Sql) => Promise<T>) =>
    sql.atomic((q) => {
      clock.bump(q, sessionId);
      return fn(q);
    });

  return {
    comments: (sessionId) => comments('session_id = ? ORDER BY seq', [sessionId]),
    comment: async (sessionId, id) => (await comments('session_id = ? AND id = ?', [sessionId, id]))[0] ?? null,
    /** A comment by its id alone (ids are unique across sessions). */
    commentById: async (id) => (await comments('id = ?', [id]))[0] ?? null,
    insertComment: (c) => write(c.session_id, async (q) => void (await q.run(SQL.insertComment, commentParams(c)))),
    editComment: (sessionId, id, body, now) =>
      write(sessionId, async (q) => void (await q.run(SQL.updateBody, [body, now, sessionId, id]))),
    deleteComment: (sessionId, id) =>
      write(sessionId, async (q) => (await q.run(SQL.deleteComment, [sessionId, id])) > 0),
    addressComment: (sessionId, id, now) =>
      write(sessionId, async (q) => void (await q.run(SQL.markAddressed, [now, now, sessionId, id]))),
    draftIds: async (sessionId) => (await sql.all<{ id: string }>(SQL.drafts, [sessionId])).map((r) => r.id),
    /** Stores a pending review and moves every draft comment of its session into it. */
    insertReview: (r) =>
      write(r.session_id, async (q) => {
        await q.run(SQL.insertReview, reviewParams(r));
        await q.run(SQL.attach, [r.id, r.created_at, r.session_id]);
      }),
    /** Stores `r` and moves those pending comments of review `fromId` into it. */
    splitReview: (sessionId, fromId, r, commentIds) =>
      write(sessionId, async (q) => {
        await q.run(SQL.insertReview, reviewParams(r));
        for (const ids of chunks(commentIds, IDS_PER_MOVE)) await q.run(SQL.move(ids.length), [r.id, fromId, ...ids]);
      }),
    reviews: (sessionId) => reviews('session_id = ? ORDER BY seq', [sessionId]),
    review: async (sessionId, id) => (await reviews('session_id = ? AND id = ?', [sessionId, id]))[0] ?? null,
    commentsOf: (reviewId) => comments('review_id = ? ORDER BY seq', [reviewId]),
    pending: (sessionId) => reviews(`session_id = ? AND state = 'pending' ORDER BY created_at, seq`, [sessionId]),
    /** Sessions with a review waiting for delivery. */
    sessionsWithPending: async () =>
      (await sql.all<{ session_id: string }>(SQL.pendingSessions)).map((r) => r.session_id),
    /** A pending review's text, rebuilt after one of its comments changed (a delivered text never changes). */
    setText: (sessionId, id, text) => write(sessionId, async (q) => void (await q.run(SQL.setText, [text, id]))),
    /** Marks a pending review and its pending comments delivered; false when it was not pending any more. */
    deliver: (sessionId, id, at, via, to) =>
      write(sessionId, async (q) => {
        if ((await q.run(SQL.deliverReview, [at, via, to, id])) === 0) return false;
        await q.run(SQL.deliverComments, [at, via, at, id]);
        return true;
      }),
    deleteReview: (sessionId, id) => write(sessionId, async (q) => void (await q.run(SQL.deleteReview, [id]))),
    /** A stored change's place in its session's order; null when it is not stored. */
    changeOrder: async (sessionId, changeId) =>
      (await sql.get<ChangeOrder>(SQL.changeOrder, [sessionId, changeId])) ?? null,
    /** Every stored file row of a session whose path, or whose name before a rename, is `path`. */
    touches: (sessionId, path) =>
      sql.read(async (q) => [
        ...(await q.all<PathTouch>(SQL.touchesByPath, [sessionId, path])),
        ...(await q.all<PathTouch>(SQL.touchesByOldPath, [sessionId, path])),
      ]),
  };
}
