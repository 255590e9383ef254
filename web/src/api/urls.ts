import type { SessionFilter } from '../../../shared/index.ts';

/** REST paths of docs/contract.md section 3. Every id is percent-encoded (a change_id contains `:`). */
const enc = encodeURIComponent;
const base = '/api/hermes/sessions';

/** A range of runs for the net change: run-level change ids, absent = the first / the last run. */
export interface NetRangeQuery {
  from?: string | null;
  to?: string | null;
}

function rangeQuery(r: NetRangeQuery): string {
  const q = new URLSearchParams();
  if (r.from) q.set('from', r.from);
  if (r.to) q.set('to', r.to);
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const urls = {
  health: () => '/api/health',
  agentNotices: () => '/api/agents/notices',
  demo: () => '/api/demo',
  sessions: (opts: { limit?: number; before?: number | null; filter?: SessionFilter } = {}) => {
    const q = new URLSearchParams();
    if (opts.limit !== undefined) q.set('limit', String(opts.limit));
    if (opts.before !== undefined && opts.before !== null) q.set('before', String(opts.before));
    for (const [key, value] of Object.entries(opts.filter ?? {})) if (value !== undefined) q.set(key, String(value));
    const s = q.toString();
    return s ? `${base}?${s}` : base;
  },
  session: (id: string, opts: { messagesBefore?: number; messagesLimit?: number } = {}) => {
    const q = new URLSearchParams();
    if (opts.messagesBefore !== undefined) q.set('messages_before', String(opts.messagesBefore));
    if (opts.messagesLimit !== undefined) q.set('messages_limit', String(opts.messagesLimit));
    const s = q.toString();
    return `${base}/${enc(id)}${s ? `?${s}` : ''}`;
  },
  change: (sessionId: string, changeId: string) => `${base}/${enc(sessionId)}/workspace-run-changes/${enc(changeId)}`,
  /** A page of a change's rows: those after position `after` (-1: from the first). */
  files: (sessionId: string, changeId: string, page: { after: number; limit: number }) => {
    const q = new URLSearchParams({ limit: String(page.limit) });
    if (page.after >= 0) q.set('after', String(page.after));
    return `${base}/${enc(sessionId)}/workspace-run-changes/${enc(changeId)}/files?${q.toString()}`;
  },
  file: (sessionId: string, changeId: string, fileId: string) =>
    `${base}/${enc(sessionId)}/workspace-run-changes/${enc(changeId)}/files/${enc(fileId)}`,
  /** One recorded side of a changed file (`.../files/:fileId/content?side=`). */
  fileContent: (sessionId: string, changeId: string, fileId: string, side: 'before' | 'after') =>
    `${base}/${enc(sessionId)}/workspace-run-changes/${enc(changeId)}/files/${enc(fileId)}/content?side=${side}`,
  /** The same side's raw bytes (`&encoding=raw`), typed by their magic bytes (images for previews). */
  fileBytes: (sessionId: string, changeId: string, fileId: string, side: 'before' | 'after') =>
    `${base}/${enc(sessionId)}/workspace-run-changes/${enc(changeId)}/files/${enc(fileId)}/content?side=${side}&encoding=raw`,
  patch: (sessionId: string, changeId: string) =>
    `${base}/${enc(sessionId)}/workspace-run-changes/${enc(changeId)}/patch`,
  /** Which run wrote each line of `path`, at the end of change `at`. */
  blame: (sessionId: string, path: string, at: string) =>
    `${base}/${enc(sessionId)}/blame?path=${enc(path)}&at=${enc(at)}`,
  netChange: (sessionId: string, range: NetRangeQuery = {}) =>
    `${base}/${enc(sessionId)}/net-change${rangeQuery(range)}`,
  netFile: (sessionId: string, fileId: string, range: NetRangeQuery = {}) =>
    `${base}/${enc(sessionId)}/net-change/files/${enc(fileId)}${rangeQuery(range)}`,
  /** The viewed marks of the net change's range start (GET, PUT with a body). */
  netViewed: (sessionId: string, range: NetRangeQuery = {}) =>
    `${base}/${enc(sessionId)}/net-change/viewed${rangeQuery(range)}`,
  /** Unmarking one net file: DELETE names it in the query. */
  netUnviewed: (sessionId: string, fileId: string, range: NetRangeQuery = {}) => {
    const q = rangeQuery(range);
    return `${base}/${enc(sessionId)}/net-change/viewed${q}${q ? '&' : '?'}file_id=${enc(fileId)}`;
  },
  revert: (sessionId: string, changeId: string) =>
    `${base}/${enc(sessionId)}/workspace-run-changes/${enc(changeId)}/revert`,
  /** The session's viewed marks (GET, PUT with a body). */
  viewed: (sessionId: string) => `${base}/${enc(sessionId)}/viewed`,
  /** Unmarking one file row: DELETE names it in the query. */
  unviewed: (sessionId: string, changeId: string, fileId: string) =>
    `${base}/${enc(sessionId)}/viewed?${new URLSearchParams({ change_id: changeId, file_id: fileId }).toString()}`,
  workspaces: () => '/api/hermes/workspaces',
  /** Search over everything recorded (contract.md section 3f), or one session's. */
  search: (q: string, opts: { limit?: number; session?: string } = {}) => {
    const params = new URLSearchParams({ q });
    if (opts.limit !== undefined) params.set('limit', String(opts.limit));
    if (opts.session !== undefined) params.set('session', opts.session);
    return `/api/hermes/search?${params.toString()}`;
  },
  /** A session's review comments and the reviews sent (contract.md section 3c). */
  review: (sessionId: string) => `${base}/${enc(sessionId)}/review`,
  comments: (sessionId: string) => `${base}/${enc(sessionId)}/comments`,
  comment: (sessionId: string, commentId: string) => `${base}/${enc(sessionId)}/comments/${enc(commentId)}`,
  commentAddressed: (sessionId: string, commentId: string) =>
    `${base}/${enc(sessionId)}/comments/${enc(commentId)}/addressed`,
  reviews: (sessionId: string) => `${base}/${enc(sessionId)}/reviews`,
  /** Who would read a review sent from the session (hook, MCP or nobody). */
  reviewReader: (sessionId: string) => `${base}/${enc(sessionId)}/review/reader`,
  reviewDelivered: (sessionId: string, reviewId: string) =>
    `${base}/${enc(sessionId)}/reviews/${enc(reviewId)}/delivered`,
};

/** A download name made of safe characters only: `<session>-<change>.patch`. */
export function patchFileName(sessionId: string, changeId: string): string {
  const clean = (s: string) =>
    s
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^[._]+/, '')
      .slice(0, 80) || 'x';
  return `${clean(sessionId)}-${clean(changeId)}.patch`;
}
