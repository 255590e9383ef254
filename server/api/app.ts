import express, { type Express, type RequestHandler, type Router } from 'express';
import type { Bridge, History } from '../runs/index.ts';
import { AppError } from '../errors.ts';
import { bridgeRouter } from './bridge.ts';
import { changesRouter } from './changes.ts';
import { demoRouter } from './demo.ts';
import { apiNotFound, errorMiddleware } from './errors.ts';
import { healthRouter } from './health.ts';
import { bearerToken, checkHostAndOrigin, tokenMatches, unauthorized, type SecurityPolicy } from './security.ts';
import { sessionsRouter } from './sessions.ts';
import { webRouter } from './web.ts';

export interface AppDeps {
  bridge: Bridge;
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
  log?: (message: string) => void;
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

/** POST bodies are JSON only (415 otherwise), at most `maxBodyBytes` (413), parsed strictly (400). */
function jsonBody(maxBodyBytes: number): RequestHandler {
  const parse = express.json({ limit: maxBodyBytes, strict: true, type: () => true });
  return (req, res, next) => {
    if (req.method !== 'POST' && req.method !== 'PUT' && req.method !== 'PATCH') return next();
    if (!req.is('application/json')) {
      next(
        new AppError('unsupported_media_type', 'the request body must be JSON', {
          hint: 'send Content-Type: application/json',
        }),
      );
      return;
    }
    parse(req, res, next);
  };
}

/** The express app: guards first (Host, Origin, token), then the API, then the web UI. */
export function createApp(deps: AppDeps): Express {
  const log = deps.log ?? ((m: string) => void process.stderr.write(`rundiff: ${m}\n`));
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(securityHeaders);
  app.use((req, _res, next) => next(checkHostAndOrigin(req.headers, deps.policy) ?? undefined));

  const api = express.Router();
  api.use((req, _res, next) =>
    next(tokenMatches(bearerToken(req.headers.authorization), deps.policy) ? undefined : unauthorized()),
  );
  api.use(jsonBody(deps.maxBodyBytes));
  api.use(healthRouter());
  api.use(bridgeRouter(deps.bridge));
  api.use(sessionsRouter(deps.history, deps.bridge));
  api.use(changesRouter(deps.history));
  api.use(demoRouter({ policy: deps.policy, log }));
  if (deps.toolsRouter) api.use('/tools', deps.toolsRouter);
  api.use(apiNotFound);
  app.use('/api', api);

  app.use(webRouter(deps.webDir));
  app.use(errorMiddleware(log));
  return app;
}
