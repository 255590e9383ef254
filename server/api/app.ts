import express, { type ErrorRequestHandler, type Express, type RequestHandler, type Router } from 'express';
import type {
  AgentSetupNotice,
  ContentStoreStats,
  EdgeOutboxStatus,
  InotifyStats,
  Limits,
} from '../../shared/index.ts';
import { jsonDepth, MAX_JSON_DEPTH } from '../../shared/index.ts';
import type { Store } from '../store/index.ts';
import type { Recorder, History } from '../runs/index.ts';
import type { Reverter } from '../revert/index.ts';
import { AppError } from '../errors.ts';
import { bridgeRouter } from './bridge.ts';
import { edgeCentreRouter, edgeStatusRouter, type EdgeCentreDeps } from './edge.ts';
import { changesRouter } from './changes.ts';
import { changeIdIn } from './params.ts';
import { fileContentRouter } from './file-content.ts';
import { demoRouter } from './demo.ts';
import { agentsRouter } from './agents.ts';
import { apiNotFound, errorMiddleware } from './errors.ts';
import { healthRouter } from './health.ts';
import { hooksRouter } from './hooks.ts';
import { createHookRuntime } from '../hooks/index.ts';
import { bearerToken, checkHostAndOrigin, tokenMatches, unauthorized, type SecurityPolicy } from '../security/index.ts';
import { createKeptPatches } from '../net-change/index.ts';
import { netChangeRouter } from './net-change.ts';
import { blameRouter } from './blame.ts';
import type { Reviews } from '../review/index.ts';
import { reviewBodyOptional, reviewsRouter } from './reviews.ts';
import { revertRouter } from './revert.ts';
import { searchRouter } from './search.ts';
import { sessionsRouter } from './sessions.ts';
import { viewedRouter } from './viewed.ts';
import { webRouter } from './web.ts';
import { workspacesRouter } from './workspaces.ts';

export interface AppDeps {
  recorder: Recorder;
  history: History;
  policy: SecurityPolicy;
  maxBodyBytes: number;
  /** The built web UI; default `dist/web`. */
  webDir?: string;
  /**
   * The git tools' routes (`POST /api/tools/<name>`, `GET /api/tools/calls`,
   * `POST /api/tools/approvals/:approval_id`), mounted at `/api/tools` behind the same guards.
   */
  toolsRouter?: Router;
  /** Undoing stored changes (`POST .../workspace-run-changes/:changeId/revert`). */
  reverter?: Reverter;
  /** The store and limits behind `GET .../net-change` (a session's net change); absent, no such route. */
  netChange?: { store: Store; limits: Readonly<Limits> };
  /** Review comments and reviews (section 3c); absent, no such routes and hooks answer `{}`. */
  reviews?: Reviews;
  /** Edges this server accepts (`POST /api/edge/batches`); absent, it accepts none. */
  edgeCentre?: EdgeCentreDeps;
  /** This edge's outbox (`GET /api/edge/status`); absent on a server without upstream. */
  edgeStatus?: () => Promise<EdgeOutboxStatus>;
  /** The content store's use, shown by `GET /api/health`. */
  contentStats?: () => Promise<ContentStoreStats>;
  /** The inotify watches the process holds, shown by `GET /api/health` (null: none to count). */
  inotifyStats?: () => InotifyStats | null;
  /** What keeps agents' runs from being recorded on this machine (`GET /api/agents/notices`); absent, none. */
  agentNotices?: () => AgentSetupNotice[];
  log?: (message: string) => void;
  /** The most agent sessions whose hook state is followed at once; default `MAX_HOOK_SESSIONS`. */
  hookMaxSessions?: number;
}

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Content-Security-Policy':
      "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  });
  next();
};

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * body-parser decodes leniently: invalid UTF-8 would become U+FFFD and be stored as if sent.
 * The raw bytes are checked before parsing instead.
 */
function verifyUtf8(_req: unknown, _res: unknown, buf: Buffer, encoding: string | null): void {
  if (encoding !== null && encoding !== 'utf-8' && encoding !== 'utf8')
    throw new AppError('unsupported_media_type', `the request body must be UTF-8 JSON, not ${encoding}`, {
      hint: 'send Content-Type: application/json; charset=utf-8',
    });
  try {
    strictUtf8.decode(buf);
  } catch {
    throw new AppError('invalid_input', 'the request body is not valid UTF-8', {
      hint: 'encode every string as UTF-8; binary data does not belong in a JSON string',
    });
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * JSON escapes can still spell half of a surrogate pair (`"\ud800"`), which no UTF-8 text holds
 * and SQLite would store as U+FFFD; a body with such a string or key is refused like invalid bytes.
 */
function holdsLoneSurrogate(body: unknown): boolean {
  // A list of values still to look at rather than recursion: no body can reach the stack's end.
  const pending: unknown[] = [body];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return true;
    } else if (Array.isArray(value)) pending.push(...(value as unknown[]));
    else if (value !== null && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) {
        if (LONE_SURROGATE.test(k)) return true;
        pending.push(v);
      }
  }
  return false;
}

/** Refuses a body nested deeper than `MAX_JSON_DEPTH`, from its bytes, before it is parsed. */
function verifyDepth(buf: Buffer): void {
  if (jsonDepth(buf) > MAX_JSON_DEPTH)
    throw new AppError(
      'invalid_input',
      `the request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`,
      {
        hint: 'send a flatter document',
        details: { max_depth: MAX_JSON_DEPTH },
      },
    );
}

/** A request that carries no body at all: no Content-Type, no Transfer-Encoding, no or a zero Content-Length. */
// No body: no transfer encoding and no length (or 0). A JSON content type on such a request (curl
// -H 'Content-Type: application/json' with no -d) still sends nothing.
const sendsNothing = (req: express.Request) =>
  (req.headers['content-type'] === undefined || /^\s*application\/json\s*(;|$)/i.test(req.headers['content-type'])) &&
  req.headers['transfer-encoding'] === undefined &&
  (req.headers['content-length'] === undefined || req.headers['content-length'] === '0');

/**
 * POST bodies are JSON only (415 otherwise), at most `maxBodyBytes` (413), strict UTF-8 and parsed
 * strictly (400). An announced Content-Length over the limit is refused before a byte of the body
 * is read, and the connection is closed rather than kept to drain what the client still sends.
 * A route whose body is optional (`bodyOptional`) also takes a request with no body and no
 * Content-Type (its body is then `undefined`).
 */
function jsonBody(
  maxBodyBytes: number,
  setting = 'RUNDIFF_MAX_BODY_BYTES',
  bodyOptional: (req: express.Request) => boolean = () => false,
): RequestHandler {
  const tooLarge = (details: Record<string, number>) =>
    new AppError('payload_too_large', `the request body is larger than ${maxBodyBytes} bytes`, {
      hint: `raise ${setting} or send less`,
      details: { limit_bytes: maxBodyBytes, ...details },
    });
  const parse = express.json({
    limit: maxBodyBytes,
    strict: true,
    type: () => true,
    verify: (req, res, buf, encoding) => {
      verifyUtf8(req, res, buf, encoding);
      verifyDepth(buf);
    },
  });
  return (req, res, next) => {
    if (req.method !== 'POST' && req.method !== 'PUT' && req.method !== 'PATCH') return next();
    if (sendsNothing(req) && bodyOptional(req)) {
      req.body = undefined;
      return next();
    }
    if (!req.is('application/json')) {
      next(
        new AppError('unsupported_media_type', 'the request body must be JSON', {
          hint: 'send Content-Type: application/json',
        }),
      );
      return;
    }
    const announced = Number(req.headers['content-length']);
    if (Number.isFinite(announced) && announced > maxBodyBytes) {
      next(tooLarge({ announced_bytes: announced }));
      return;
    }
    parse(req, res, (err?: unknown) => {
      // This runs from the request stream's events, outside express's reach: whatever it throws
      // goes to the error middleware, or it would end the process.
      try {
        // The limit the body passed is this route's (its setting named in the hint).
        if ((err as { type?: string } | undefined)?.type === 'entity.too.large') err = tooLarge({});
        if (err === undefined && holdsLoneSurrogate(req.body))
          err = new AppError(
            'invalid_input',
            'the request body holds a lone UTF-16 surrogate escape (\\ud800-\\udfff)',
            {
              hint: 'escape a character outside the BMP as a surrogate pair, or send it as UTF-8',
            },
          );
      } catch (caught) {
        err = caught;
      }
      next(err);
    });
  };
}

/**
 * An error answered before the request body was read (token, media type, announced size) closes
 * the connection: otherwise Node keeps it open to read and discard whatever the client sends.
 */
const closeUnreadBody: ErrorRequestHandler = (err, req, res, next) => {
  if (!req.complete) res.set('Connection', 'close');
  next(err);
};

/** The express app: guards first (Host, Origin, token), then the API, then the web UI. */
export function createApp(deps: AppDeps): Express {
  const log = deps.log ?? ((m: string) => void process.stderr.write(`rundiff: ${m}\n`));
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(securityHeaders);
  app.use((req, _res, next) => next(checkHostAndOrigin(req.headers, deps.policy) ?? undefined));

  // Edges authenticate with their own tokens, before the server's token guard and body parser.
  app.use('/api/edge', edgeCentreRouter(deps.edgeCentre, jsonBody));

  const api = express.Router();
  api.use((req, _res, next) =>
    next(tokenMatches(bearerToken(req.headers.authorization), deps.policy) ? undefined : unauthorized()),
  );
  const parseBody = jsonBody(deps.maxBodyBytes, undefined, (req) => reviewBodyOptional(req.method, req.path));
  // Before the shared body parser: an agent's hook answers 200 even when its body does not parse.
  const hookRuntime = createHookRuntime({
    recorder: deps.recorder,
    log,
    ...(deps.hookMaxSessions !== undefined ? { maxSessions: deps.hookMaxSessions } : {}),
  });
  api.use(
    hooksRouter({
      runtime: hookRuntime,
      parseBody,
      log,
      ...(deps.reviews ? { reviews: deps.reviews } : {}),
    }),
  );
  // Before the shared body parser too: an over-limit tool.completed still closes its tool call.
  api.use(bridgeRouter({ recorder: deps.recorder, parseBody, log }));
  api.use(parseBody);
  api.use(healthRouter(deps.contentStats, deps.inotifyStats));
  api.use(agentsRouter(deps.agentNotices));
  api.use(sessionsRouter(deps.history, deps.recorder));
  api.use(searchRouter(deps.history));
  // A change's kept contents are written just after its answer: the routes that read them wait
  // for that write instead of answering from a partial store (a comment's lines, a patch without
  // whitespace, where a review's comments are now).
  const settled = deps.recorder.contentsSettled;
  const resolveChange = (sessionId: string, changeId: string) => deps.history.resolveChangeId(sessionId, changeId);
  const afterContents =
    (changeOf: (req: express.Request) => Promise<string | undefined>): express.RequestHandler =>
    (req, _res, next) => {
      changeOf(req)
        .then((changeId) => settled(String(req.params.id), changeId))
        .then(() => next(), next);
    };
  api.post(
    '/hermes/sessions/:id/comments',
    afterContents(async () => undefined),
  );
  api.get(
    '/hermes/sessions/:id/review',
    afterContents(async () => undefined),
  );
  api.get('/hermes/sessions/:id/workspace-run-changes/:changeId/files/:fileId', (req, res, next) => {
    if (req.query.whitespace === undefined) next();
    else afterContents((r) => changeIdIn(resolveChange, String(r.params.id), r.params.changeId))(req, res, next);
  });
  api.use(
    changesRouter(
      deps.history,
      deps.netChange && {
        contents: deps.netChange.store.contents,
        limits: deps.netChange.limits,
        log,
        kept: createKeptPatches(deps.netChange.store.contents, {
          maxBytes: deps.netChange.limits.maxOpenedPatchBytes,
          diffTimeoutMs: deps.netChange.limits.diffTimeoutMs,
        }),
        settled,
      },
    ),
  );
  api.use(viewedRouter(deps.recorder));
  api.use(edgeStatusRouter(deps.edgeStatus));
  api.use(workspacesRouter(deps.history));
  if (deps.reverter) api.use(revertRouter(deps.reverter, resolveChange));
  if (deps.netChange) {
    // Both read kept contents: they wait for a change's contents still being written.
    api.use(netChangeRouter(deps.netChange.store, deps.netChange.limits, settled));
    api.use(fileContentRouter(deps.history, deps.netChange.store.contents, settled));
    api.use(blameRouter(deps.netChange.store, deps.netChange.limits, settled));
  }
  if (deps.reviews) {
    const readers = deps.reviews.readers({
      knows: (agent) => hookRuntime.knows(agent),
      delivers: (agent) => hookRuntime.replyOf(agent) !== undefined,
    });
    api.use(reviewsRouter(deps.reviews, resolveChange, readers));
  }
  api.use(demoRouter({ policy: deps.policy, log }));
  if (deps.toolsRouter) api.use('/tools', deps.toolsRouter);
  api.use(apiNotFound);
  app.use('/api', api);

  app.use(webRouter(deps.webDir));
  app.use(closeUnreadBody);
  app.use(errorMiddleware(log));
  return app;
}
