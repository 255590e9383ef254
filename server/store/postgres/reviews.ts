import type { ChangeOrder, PathTouch, StoredComment, StoredReview } from '../reviews.ts';
import type { ReviewsApi } from '../types.ts';
import { bump } from './clock.ts';
import { placeholders, type Exec } from './exec.ts';

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
const COMMENT_COLUMNS = COMMENT_FIELDS.join(', ');
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
const REVIEW_COLUMNS = REVIEW_FIELDS.join(', ');
const FINISH = 'COALESCE(c.finished_at, c.created_at)';

type CommentRow = Omit<StoredComment, 'lines'> & { lines: string };
const toComment = (r: CommentRow): StoredComment => ({ ...r, lines: JSON.parse(r.lines) as string[] });

export function createPgReviews(x: Exec): ReviewsApi {
  const comments = async (where: string, values: unknown[]) =>
    (await x.q.query<CommentRow>(`SELECT ${COMMENT_COLUMNS} FROM review_comments WHERE ${where}`, values)).rows.map(
      toComment,
    );
  const reviews = async (where: string, values: unknown[]) =>
    (await x.q.query<StoredReview>(`SELECT ${REVIEW_COLUMNS} FROM reviews WHERE ${where}`, values)).rows;
  const touches = (column: 'path' | 'old_path') =>
    `SELECT f.change_id, f.id AS file_id, f.path, f.old_path, f.change_type, ${FINISH} AS finished_at, c.seq AS seq
     FROM workspace_run_change_files f
     JOIN workspace_run_changes c ON c.session_id = f.session_id AND c.change_id = f.change_id
     WHERE f.session_id = $1 AND f.${column} = $2`;

  return {
    comments: (sessionId) => comments('session_id = $1 ORDER BY seq', [sessionId]),
    comment: async (sessionId, id) => (await comments('session_id = $1 AND id = $2', [sessionId, id]))[0] ?? null,
    commentById: async (id) => (await comments('id = $1', [id]))[0] ?? null,
    insertComment: (c) =>
      x.atomic(async (q) => {
        await bump(q, c.session_id);
        await q.query(
          `INSERT INTO review_comments (${COMMENT_COLUMNS}) VALUES (${placeholders(COMMENT_FIELDS.length)})`,
          COMMENT_FIELDS.map((k) => (k === 'lines' ? JSON.stringify(c.lines) : c[k])),
        );
      }),
    editComment: (sessionId, id, body, now) =>
      x.atomic(async (q) => {
        await bump(q, sessionId);
        await q.query('UPDATE review_comments SET body = $1, updated_at = $2 WHERE session_id = $3 AND id = $4', [
          body,
          now,
          sessionId,
          id,
        ]);
      }),
    deleteComment: (sessionId, id) =>
      x.atomic(async (q) => {
        await bump(q, sessionId);
        const { rowCount } = await q.query('DELETE FROM review_comments WHERE session_id = $1 AND id = $2', [
          sessionId,
          id,
        ]);
        return (rowCount ?? 0) > 0;
      }),
    addressComment: (sessionId, id, now) =>
      x.atomic(async (q) => {
        await bump(q, sessionId);
        await q.query(
          `UPDATE review_comments SET state = 'addressed', addressed_at = $1, updated_at = $1
           WHERE session_id = $2 AND id = $3`,
          [now, sessionId, id],
        );
      }),
    async draftIds(sessionId) {
      const { rows } = await x.q.query<{ id: string }>(
        `SELECT id FROM review_comments WHERE session_id = $1 AND state = 'draft' ORDER BY seq`,
        [sessionId],
      );
      return rows.map((r) => r.id);
    },
    insertReview: (r) =>
      x.atomic(async (q) => {
        await bump(q, r.session_id);
        await q.query(
          `INSERT INTO reviews (${REVIEW_COLUMNS}) VALUES (${placeholders(REVIEW_FIELDS.length)})`,
          REVIEW_FIELDS.map((k) => r[k]),
        );
        await q.query(
          `UPDATE review_comments SET state = 'pending', review_id = $1, updated_at = $2
           WHERE session_id = $3 AND state = 'draft'`,
          [r.id, r.created_at, r.session_id],
        );
      }),
    splitReview: (sessionId, fromId, r, commentIds) =>
      x.atomic(async (q) => {
        await bump(q, sessionId);
        await q.query(
          `INSERT INTO reviews (${REVIEW_COLUMNS}) VALUES (${placeholders(REVIEW_FIELDS.length)})`,
          REVIEW_FIELDS.map((k) => r[k]),
        );
        await q.query(
          `UPDATE review_comments SET review_id = $1 WHERE review_id = $2 AND id = ANY($3::text[]) AND state = 'pending'`,
          [r.id, fromId, [...commentIds]],
        );
      }),
    reviews: (sessionId) => reviews('session_id = $1 ORDER BY seq', [sessionId]),
    review: async (sessionId, id) => (await reviews('session_id = $1 AND id = $2', [sessionId, id]))[0] ?? null,
    commentsOf: (reviewId) => comments('review_id = $1 ORDER BY seq', [reviewId]),
    pending: (sessionId) => reviews(`session_id = $1 AND state = 'pending' ORDER BY created_at, seq`, [sessionId]),
    async sessionsWithPending() {
      const { rows } = await x.q.query<{ session_id: string }>(
        `SELECT DISTINCT session_id FROM reviews WHERE state = 'pending'`,
      );
      return rows.map((r) => r.session_id);
    },
    setText: (sessionId, id, text) =>
      x.atomic(async (q) => {
        await bump(q, sessionId);
        await q.query(`UPDATE reviews SET text = $1 WHERE id = $2 AND state = 'pending'`, [text, id]);
      }),
    deliver: (sessionId, id, at, via, to) =>
      x.atomic(async (q) => {
        await bump(q, sessionId);
        const { rowCount } = await q.query(
          `UPDATE reviews SET state = 'delivered', delivered_at = $1, delivered_via = $2, delivered_to = $3
           WHERE id = $4 AND state = 'pending'`,
          [at, via, to, id],
        );
        if ((rowCount ?? 0) === 0) return false;
        await q.query(
          `UPDATE review_comments SET state = 'delivered', delivered_at = $1, delivered_via = $2, updated_at = $1
           WHERE review_id = $3 AND state = 'pending'`,
          [at, via, id],
        );
        return true;
      }),
    deleteReview: (sessionId, id) =>
      x.atomic(async (q) => {
        await bump(q, sessionId);
        await q.query('DELETE FROM reviews WHERE id = $1', [id]);
      }),
    async changeOrder(sessionId, changeId) {
      const { rows } = await x.q.query<ChangeOrder>(
        `SELECT ${FINISH} AS finished_at, c.seq AS seq FROM workspace_run_changes c WHERE c.session_id = $1 AND c.change_id = $2`,
        [sessionId, changeId],
      );
      return rows[0] ?? null;
    },
    touches: (sessionId, path) =>
      x.read(async (q) => {
        const byPath = await q.query<PathTouch>(touches('path'), [sessionId, path]);
        const byOld = await q.query<PathTouch>(touches('old_path'), [sessionId, path]);
        return [...byPath.rows, ...byOld.rows];
      }),
  };
}
