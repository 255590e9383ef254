import path from 'node:path';
import { Router } from 'express';
import type { NewCommentBody } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import type { ReviewReaders, Reviews } from '../review/index.ts';
import { isValidId, type ChangeIdResolver } from '../runs/index.ts';
import { changeIdParam, idParam } from './params.ts';

/**
 * Review comments and reviews (docs/contract.md section 3c): write, edit, delete and address
 * comments on a stored change's lines, send the drafts as a review, and for a runtime without hooks
 * or MCP, say a review was handed to its agent. `POST /api/reviews/deliver` is what
 * `rundiff mcp --server` calls for its `review_comments` tool.
 */

const fieldError = (field: string, message: string) => new AppError('invalid_input', message, { details: { field } });

function objectBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new AppError('invalid_input', `the body must be a JSON object {${allowed.join(', ')}}`);
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (!allowed.includes(k)) throw fieldError(k, `unknown field ${JSON.stringify(k)}`);
  return b;
}

function lineField(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw fieldError(field, `${field} must be a whole number from 1`);
  return value;
}

function newComment(body: unknown): NewCommentBody {
  const b = objectBody(body, ['change_id', 'file_id', 'side', 'start_line', 'end_line', 'body']);
  let change_id: string;
  try {
    change_id = changeIdParam(b.change_id);
  } catch {
    throw fieldError('change_id', 'change_id must be run:<run_id> or tool:<tool_call_id>');
  }
  if (typeof b.file_id !== 'string' || !isValidId(b.file_id))
    throw fieldError('file_id', 'file_id must be 1-200 printable characters');
  if (b.side !== 'before' && b.side !== 'after') throw fieldError('side', 'side must be "before" or "after"');
  const start_line = lineField(b.start_line, 'start_line');
  const end_line = lineField(b.end_line, 'end_line');
  if (end_line < start_line) throw fieldError('end_line', 'end_line must not be before start_line');
  if (typeof b.body !== 'string') throw fieldError('body', 'body must be a non-empty string');
  return { change_id, file_id: b.file_id, side: b.side, start_line, end_line, body: b.body };
}

/** An agent's name as shown to the person: 1-200 printable characters, or none. */
function agentField(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !isValidId(value))
    throw fieldError('agent', 'agent must be 1-200 printable characters');
  return value;
}

function workspacesField(value: unknown): string[] {
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    value.length > 64 ||
    value.some((w) => typeof w !== 'string' || w.length > 4096 || w.includes('\0') || !path.isAbsolute(w))
  )
    throw fieldError('workspaces', 'workspaces must be 1-64 absolute folder paths');
  return value as string[];
}

/**
 * The review routes whose body is optional (every field has a default): they also take a POST with
 * no body and no Content-Type, as the contract shows them (`curl -X POST .../addressed`).
 */
const BODY_OPTIONAL = [
  /^\/hermes\/sessions\/[^/]+\/comments\/[^/]+\/addressed$/,
  /^\/hermes\/sessions\/[^/]+\/reviews$/,
  /^\/hermes\/sessions\/[^/]+\/reviews\/[^/]+\/delivered$/,
];

/** Whether `method path` (relative to `/api`) is a review route whose body may be left out. */
export const reviewBodyOptional = (method: string, path: string): boolean =>
  method === 'POST' && BODY_OPTIONAL.some((re) => re.test(path));

export function reviewsRouter(reviews: Reviews, resolve: ChangeIdResolver, readers: ReviewReaders): Router {
  const router = Router();
  const session = (v: unknown) => idParam(v, 'id');

  router.get('/hermes/sessions/:id/review', async (req, res) => {
    res.json(await reviews.view(session(req.params.id)));
  });
  router.get('/hermes/sessions/:id/review/reader', async (req, res) => {
    const id = session(req.params.id);
    const reader = await readers.readerOf(id);
    if (!reader) throw new AppError('not_found', `no session ${JSON.stringify(id)}`);
    res.json({ reader });
  });
  router.post('/hermes/sessions/:id/comments', async (req, res) => {
    const id = session(req.params.id);
    const body = newComment(req.body);
    body.change_id = await resolve(id, body.change_id);
    res.status(201).json({ comment: await reviews.createComment(id, body) });
  });
  router.patch('/hermes/sessions/:id/comments/:commentId', async (req, res) => {
    const id = session(req.params.id);
    const commentId = idParam(req.params.commentId, 'commentId');
    const b = objectBody(req.body, ['body']);
    res.json({ comment: await reviews.editComment(id, commentId, b.body) });
  });
  router.delete('/hermes/sessions/:id/comments/:commentId', async (req, res) => {
    await reviews.deleteComment(session(req.params.id), idParam(req.params.commentId, 'commentId'));
    res.status(204).end();
  });
  router.post('/hermes/sessions/:id/comments/:commentId/addressed', async (req, res) => {
    const id = session(req.params.id);
    objectBody(req.body, []);
    res.json({ comment: await reviews.address(id, idParam(req.params.commentId, 'commentId')) });
  });
  router.post('/hermes/sessions/:id/reviews', async (req, res) => {
    const id = session(req.params.id);
    const b = objectBody(req.body, ['note', 'mode']);
    res.status(201).json(await reviews.send(id, b));
  });
  router.post('/hermes/sessions/:id/reviews/:reviewId/delivered', async (req, res) => {
    const id = session(req.params.id);
    const reviewId = idParam(req.params.reviewId, 'reviewId');
    const b = objectBody(req.body, ['agent']);
    res.json(await reviews.deliveredByRest(id, reviewId, agentField(b.agent)));
  });

  /** MCP's pull: the pending reviews of sessions in these workspaces, marked delivered by `mcp`. */
  router.post('/reviews/deliver', async (req, res) => {
    const b = objectBody(req.body, ['workspaces', 'agent']);
    const workspaces = workspacesField(b.workspaces);
    const agent = agentField(b.agent);
    readers.mcpSeen(workspaces, agent);
    res.json({ deliveries: await reviews.deliverTo(workspaces, 'mcp', agent) });
  });
  /** MCP's `review_comments_addressed`: comments of sessions in these workspaces, by id. */
  router.post('/reviews/addressed', async (req, res) => {
    const b = objectBody(req.body, ['workspaces', 'comment_ids']);
    const ids = b.comment_ids;
    if (
      !Array.isArray(ids) ||
      ids.length === 0 ||
      ids.length > 500 ||
      ids.some((x) => typeof x !== 'string' || !isValidId(x))
    )
      throw fieldError('comment_ids', 'comment_ids must be 1-500 comment ids');
    res.json(await reviews.addressIn(workspacesField(b.workspaces), ids as string[]));
  });
  return router;
}
