import type {
  AgentSetupNoticesResponse,
  BlameResponse,
  ChangeFilesPage,
  ChangeSummary,
  ContentSide,
  ErrorBody,
  FileContent,
  FileResponse,
  HealthResponse,
  NetChange,
  NetFileSummary,
  RevertRequest,
  NewCommentBody,
  RevertResponse,
  Review,
  ReviewReader,
  ReviewComment,
  DeliveryMode,
  SessionDetailResponse,
  SessionReviewResponse,
  SearchResponse,
  SessionFilter,
  SessionListResponse,
  ViewedRequest,
  ViewedResponse,
  NetViewedRequest,
  NetViewedResponse,
  WorkspacesResponse,
} from '../../../shared/index.ts';
import { currentToken, setToken } from './token.ts';
import { patchFileName, urls, type NetRangeQuery } from './urls.ts';

/** A failed request, with the server's error code, or `unreachable` when no answer came. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
    /** The error's `details` (e.g. a refused revert's per-file plan). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Any thrown value as an ApiError (for showing it). */
export function toApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError(0, 'internal', err instanceof Error ? err.message : String(err));
}

/**
 * Asked when the server answers 401: resolves with a token typed by the user. `rejected` is true
 * when a token was already sent and refused. Set by the app (the token prompt); absent, a 401 is an error.
 */
export type TokenRequester = (rejected: boolean) => Promise<string>;
let requestToken: TokenRequester | null = null;
export function setTokenRequester(fn: TokenRequester | null): void {
  requestToken = fn;
}

async function errorFrom(res: Response): Promise<ApiError> {
  let body: Partial<ErrorBody> | null = null;
  try {
    body = (await res.json()) as Partial<ErrorBody>;
  } catch {
    body = null;
  }
  const e = body?.error;
  if (e && typeof e.message === 'string')
    return new ApiError(res.status, e.code ?? 'internal', e.message, e.hint, e.details);
  return new ApiError(
    res.status,
    res.status === 404 ? 'not_found' : 'internal',
    `The server answered ${res.status} ${res.statusText}`.trim(),
  );
}

/** fetch with the bearer token; on 401 asks for a token (once per refusal, unless it changed meanwhile) and retries. */
export async function apiFetch(path: string, init: RequestInit = {}): Promise<Response> {
  for (;;) {
    const token = currentToken();
    const headers = new Headers(init.headers);
    if (token) headers.set('Authorization', `Bearer ${token}`);
    let res: Response;
    try {
      res = await fetch(path, { ...init, headers });
    } catch {
      throw new ApiError(0, 'unreachable', 'The rundiff server cannot be reached. Is it still running?');
    }
    if (res.status === 401 && requestToken) {
      // Refused with a token that has since been replaced (the user answered the prompt while this
      // request was on its way): retry with the new one instead of asking again.
      if (currentToken() !== token) continue;
      const typed = await requestToken(token !== null);
      setToken(typed);
      continue;
    }
    if (!res.ok) throw await errorFrom(res);
    return res;
  }
}

async function getJson<T>(path: string): Promise<T> {
  const res = await apiFetch(path, { headers: { Accept: 'application/json' } });
  return (await res.json()) as T;
}

/** A JSON request with a JSON answer (`POST`, `PATCH`). */
async function sendJson<T>(path: string, method: string, body: unknown): Promise<T> {
  const res = await apiFetch(path, {
    method,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as T;
}

export const api = {
  search: (q: string, opts: { limit?: number; session?: string } = {}) => getJson<SearchResponse>(urls.search(q, opts)),
  listSessions: (opts: { limit?: number; before?: number | null; filter?: SessionFilter } = {}) =>
    getJson<SessionListResponse>(urls.sessions(opts)),
  getSession: (id: string, opts: { messagesBefore?: number; messagesLimit?: number } = {}) =>
    getJson<SessionDetailResponse>(urls.session(id, opts)),
  getChange: async (sessionId: string, changeId: string) =>
    (await getJson<{ change: ChangeSummary }>(urls.change(sessionId, changeId))).change,
  getFilesPage: (sessionId: string, changeId: string, page: { after: number; limit: number }) =>
    getJson<ChangeFilesPage>(urls.files(sessionId, changeId, page)),
  /** One file with its patch; `patch_base64` when the patch is not UTF-8 text (`file.patch` shows it with U+FFFD). */
  getFile: (sessionId: string, changeId: string, fileId: string) =>
    getJson<FileResponse>(urls.file(sessionId, changeId, fileId)),
  /** The same file with its patch computed again ignoring whitespace, where the server can. */
  getFileIgnoringWhitespace: (sessionId: string, changeId: string, fileId: string) =>
    getJson<FileResponse>(`${urls.file(sessionId, changeId, fileId)}?whitespace=ignore`),
  /**
   * One recorded side of a changed file, or null when this server keeps no file contents (it
   * answers 404 or 501 for the route): context expansion and the whole-file view then stay hidden.
   */
  getFileContent: async (
    sessionId: string,
    changeId: string,
    fileId: string,
    side: ContentSide,
  ): Promise<FileContent | null> => {
    try {
      return (await getJson<{ content: FileContent }>(urls.fileContent(sessionId, changeId, fileId, side))).content;
    } catch (err) {
      if (err instanceof ApiError && (err.status === 404 || err.status === 501)) return null;
      throw err;
    }
  },
  /**
   * One recorded side of an image as a `data:` URL (the page's policy allows those, not `blob:`);
   * `absent` when that side has no stored bytes, `not_image` when its bytes are not an image type.
   */
  getImageSide: async (
    sessionId: string,
    changeId: string,
    fileId: string,
    side: ContentSide,
  ): Promise<string | 'absent' | 'not_image'> => {
    let res: Response;
    try {
      res = await apiFetch(urls.fileBytes(sessionId, changeId, fileId, side));
    } catch (err) {
      if (err instanceof ApiError && (err.status === 404 || err.status === 501)) return 'absent';
      throw err;
    }
    const type = res.headers.get('Content-Type') ?? '';
    if (!/^image\/(png|jpeg|gif|webp)$/.test(type)) return 'not_image';
    const bytes = new Uint8Array(await res.arrayBuffer());
    let text = '';
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return `data:${type};base64,${btoa(text)}`;
  },
  /** Starts the scripted demo (or joins the one playing): `POST /api/demo`. */
  startDemo: async (): Promise<{ session_id: string; already_running: boolean }> => {
    const res = await apiFetch(urls.demo(), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: '{}',
    });
    return (await res.json()) as { session_id: string; already_running: boolean };
  },
  health: () => getJson<HealthResponse>(urls.health()),
  /** What keeps agents' runs from being recorded on the server's machine (Codex's untrusted hooks). */
  agentNotices: async () => (await getJson<AgentSetupNoticesResponse>(urls.agentNotices())).notices,
  /** Each line of a file at the end of a change with the run and tool call that last wrote it. */
  blame: async (sessionId: string, path: string, at: string) =>
    (await getJson<{ blame: BlameResponse }>(urls.blame(sessionId, path, at))).blame,
  /** The session's net change over a range of runs (default: all). */
  netChange: async (sessionId: string, range: NetRangeQuery = {}) =>
    (await getJson<{ change: NetChange }>(urls.netChange(sessionId, range))).change,
  netFile: async (sessionId: string, fileId: string, range: NetRangeQuery = {}) =>
    (await getJson<{ file: NetFileSummary & { patch: string | null } }>(urls.netFile(sessionId, fileId, range))).file,
  /** Plans (`dry_run`) or applies the undo of a change; a refusal that carries the plan throws it in `details.files`. */
  revert: async (sessionId: string, changeId: string, body: RevertRequest): Promise<RevertResponse> => {
    const res = await apiFetch(urls.revert(sessionId, changeId), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body),
    });
    return (await res.json()) as RevertResponse;
  },
  /** The session's viewed marks and the rows they cover. */
  getViewed: (sessionId: string) => getJson<ViewedResponse>(urls.viewed(sessionId)),
  /** Marks (`viewed`) or unmarks one file row; answers the session's marks after the call. */
  setViewed: async (sessionId: string, target: ViewedRequest, viewed: boolean): Promise<ViewedResponse> => {
    const res = viewed
      ? await apiFetch(urls.viewed(sessionId), {
          method: 'PUT',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
          body: JSON.stringify(target),
        })
      : await apiFetch(urls.unviewed(sessionId, target.change_id, target.file_id), {
          method: 'DELETE',
          headers: { Accept: 'application/json' },
        });
    return (await res.json()) as ViewedResponse;
  },
  /** The viewed marks of a net change's range (each said current or stale). */
  getNetViewed: (sessionId: string, range: NetRangeQuery = {}) =>
    getJson<NetViewedResponse>(urls.netViewed(sessionId, range)),
  /** Marks (`viewed`) or unmarks one net file; answers the range's marks after the call. */
  setNetViewed: async (
    sessionId: string,
    range: NetRangeQuery,
    target: NetViewedRequest,
    viewed: boolean,
  ): Promise<NetViewedResponse> => {
    if (viewed) return sendJson<NetViewedResponse>(urls.netViewed(sessionId, range), 'PUT', target);
    const res = await apiFetch(urls.netUnviewed(sessionId, target.file_id, range), {
      method: 'DELETE',
      headers: { Accept: 'application/json' },
    });
    return (await res.json()) as NetViewedResponse;
  },
  /** Every workspace the stored sessions name, for the sessions list's filter. */
  workspaces: () => getJson<WorkspacesResponse>(urls.workspaces()),
  /** The session's review comments and sent reviews, oldest first. */
  getReview: (sessionId: string) => getJson<SessionReviewResponse>(urls.review(sessionId)),
  /** A new draft comment (the server reads the lines' text from the stored change). */
  addComment: async (sessionId: string, body: NewCommentBody) =>
    (await sendJson<{ comment: ReviewComment }>(urls.comments(sessionId), 'POST', body)).comment,
  editComment: async (sessionId: string, commentId: string, body: string) =>
    (await sendJson<{ comment: ReviewComment }>(urls.comment(sessionId, commentId), 'PATCH', { body })).comment,
  deleteComment: async (sessionId: string, commentId: string): Promise<void> => {
    await apiFetch(urls.comment(sessionId, commentId), { method: 'DELETE' });
  },
  markAddressed: async (sessionId: string, commentId: string) =>
    (await sendJson<{ comment: ReviewComment }>(urls.commentAddressed(sessionId, commentId), 'POST', {})).comment,
  /** "Send to agent": every draft comment of the session, with the note, in one new pending review. */
  sendReview: (sessionId: string, body: { note: string; mode: DeliveryMode }) =>
    sendJson<{ review: Review; comments: ReviewComment[] }>(urls.reviews(sessionId), 'POST', body),
  /** Who would read a review sent from the session now, as the server knows it. */
  reviewReader: async (sessionId: string) =>
    (await getJson<{ reader: ReviewReader }>(urls.reviewReader(sessionId))).reader,
  /** Marks a pending review delivered by hand (`agent`: who or how, shown beside it). */
  markReviewDelivered: (sessionId: string, reviewId: string, agent: string) =>
    sendJson<{ review: Review; comments: ReviewComment[] }>(urls.reviewDelivered(sessionId, reviewId), 'POST', {
      agent,
    }),
  deleteSession: async (id: string): Promise<void> => {
    await apiFetch(urls.session(id), { method: 'DELETE' });
  },
  /** The whole change as a `.patch` file: fetched with the token header, saved through a blob URL. */
  downloadPatch: async (sessionId: string, changeId: string): Promise<void> => {
    const res = await apiFetch(urls.patch(sessionId, changeId));
    const blob = await res.blob();
    const href = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = href;
    a.download = patchFileName(sessionId, changeId);
    document.body.appendChild(a);
    a.click();
    a.remove();
    // Revoke after the click has been handled; revoking at once can cancel the download.
    setTimeout(() => URL.revokeObjectURL(href), 10_000);
  },
};
