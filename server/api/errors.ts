import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, toAppError } from '../errors.ts';
import { storageFailure } from '../store/index.ts';

/** body-parser and express errors carry `type` / `status`; map them onto the contract's codes. */
export function fromHttpError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { type?: string; status?: number; statusCode?: number; limit?: number } | null;
  switch (e?.type) {
    case 'entity.too.large':
      return new AppError('payload_too_large', `the request body is larger than ${e.limit} bytes`, {
        hint: 'raise RUNDIFF_MAX_BODY_BYTES or send less',
        details: { limit_bytes: e.limit },
      });
    case 'entity.parse.failed':
      return new AppError('invalid_input', 'the request body is not valid JSON (one JSON object expected)');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('unsupported_media_type', 'the request body must be UTF-8 JSON');
    case 'request.aborted':
    case 'request.size.invalid':
      return new AppError('invalid_input', 'the request body was incomplete');
  }
  const status = e?.status ?? e?.statusCode;
  if (status === 400) return new AppError('invalid_input', 'the request is malformed (bad percent-encoding?)');
  if (status === 404) return new AppError('not_found', 'not found');
  return storageFailure(err, 'the request could not be completed') ?? toAppError(err);
}

export function errorMiddleware(log: (m: string) => void): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const appError = fromHttpError(err);
    // A database that failed is the database's story (its message says what and why); anything
    // else unexpected is ours, with its stack.
    if (appError.code === 'storage_failed') log(`storage failed: ${appError.message}`);
    else if (appError.code === 'internal')
      log(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(appError.status).json(appError.toBody());
  };
}

/** Unknown `/api` routes answer the error shape, never express's HTML page. */
export const apiNotFound: RequestHandler = (req, _res, next) => {
  next(new AppError('not_found', `no route ${req.method} ${req.originalUrl.split('?')[0]}`));
};
