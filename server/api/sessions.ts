import zlib from 'node:zlib';
import { Router, type Request, type Response } from 'express';
import { AppError } from '../errors.ts';
import type { Recorder, DetailDocument, History } from '../runs/index.ts';
import { crcShift, deflatePiece, joinGzip, type PieceCodec } from './gzip-join.ts';
import { idParam, intQuery } from './params.ts';
import { sessionFilterQuery } from './session-filter.ts';

export const SESSIONS_PAGE = { default: 50, max: 200 } as const;
export const MESSAGES_PAGE = { default: 500, max: 1000 } as const;

/** Documents below this are sent as they are. */
const GZIP_MIN_BYTES = 8 * 1024;
// Work kept per Buffer: the history hands out the same objects until the session changes, and the
// same part objects for stored changes across answers, so a write costs compressing its new parts.
const plainBodies = new WeakMap<DetailDocument, Buffer>();
const gzipBodies = new WeakMap<DetailDocument, Buffer>();
const deflatedParts = new WeakMap<Buffer, Buffer>();
const checkedParts = new WeakMap<Buffer, { crc: number; shift: number }>();

const cachedPieces: PieceCodec = {
  deflate(part) {
    let d = deflatedParts.get(part);
    if (!d) deflatedParts.set(part, (d = deflatePiece(part)));
    return d;
  },
  check(part) {
    let c = checkedParts.get(part);
    if (!c) checkedParts.set(part, (c = { crc: zlib.crc32(part), shift: crcShift(part.length) }));
    return c;
  },
};

/** Sends a detail document, gzip-compressed for clients that accept it (a long timeline is megabytes). */
function sendDocument(req: Request, res: Response, doc: DetailDocument): void {
  res.type('application/json').vary('Accept-Encoding');
  const size = doc.parts.reduce((n, p) => n + p.length, 0);
  if (size < GZIP_MIN_BYTES || req.acceptsEncodings('gzip', 'identity') !== 'gzip') {
    let plain = plainBodies.get(doc);
    if (!plain) plainBodies.set(doc, (plain = Buffer.concat(doc.parts)));
    res.send(plain);
    return;
  }
  let zipped = gzipBodies.get(doc);
  if (!zipped) gzipBodies.set(doc, (zipped = joinGzip(doc.parts, cachedPieces)));
  res.set('Content-Encoding', 'gzip').send(zipped);
}

const noSession = (id: string) => new AppError('not_found', `no session ${JSON.stringify(id)}`);

/** The sessions list, one session's timeline, and deleting a session. */
export function sessionsRouter(history: History, recorder: Recorder): Router {
  const router = Router();

  router.get('/hermes/sessions', async (req, res) => {
    const limit = intQuery(req.query.limit, 'limit', { min: 1, max: SESSIONS_PAGE.max }) ?? SESSIONS_PAGE.default;
    const before = intQuery(req.query.before, 'before', { min: 0 });
    res.json(await history.listSessions(limit, before, sessionFilterQuery(req.query)));
  });

  router.get('/hermes/sessions/:id', async (req, res) => {
    const id = idParam(req.params.id, 'id');
    const limit =
      intQuery(req.query.messages_limit, 'messages_limit', { min: 1, max: MESSAGES_PAGE.max }) ?? MESSAGES_PAGE.default;
    const before = intQuery(req.query.messages_before, 'messages_before', { min: 0 });
    const doc = await history.sessionDetailDocument(id, { limit, before });
    if (!doc) throw noSession(id);
    sendDocument(req, res, doc);
  });

  router.delete('/hermes/sessions/:id', async (req, res) => {
    const id = idParam(req.params.id, 'id');
    if (!(await recorder.deleteSession(id))) throw noSession(id);
    res.status(204).end();
  });

  return router;
}
