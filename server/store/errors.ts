import { AppError } from '../errors.ts';

/**
 * A database failure as an answer that names it. SQLite's own errors (a full disk or a lowered
 * page limit: `SQLITE_FULL`; a read-only file; an I/O error) become `storage_failed` with the
 * SQLite code, so a client and the log see the real cause instead of a bare "internal error".
 * Anything else is not a storage failure: null.
 */
export function storageFailure(err: unknown, what: string, hint?: string): AppError | null {
  const pgFailure = postgresFailure(err, what, hint);
  if (pgFailure) return pgFailure;
  const e = err as { name?: unknown; code?: unknown; message?: unknown } | null;
  if (e?.name !== 'SqliteError' || typeof e.code !== 'string' || !e.code.startsWith('SQLITE_')) return null;
  return new AppError('storage_failed', `${what}: the database failed (${e.code}: ${String(e.message)})`, {
    details: { sqlite_code: e.code },
    ...(hint !== undefined ? { hint } : {}),
    cause: err,
  });
}

// Node's socket errors: the PostgreSQL server cannot be reached or went away.
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

/**
 * PostgreSQL's errors (a SQLSTATE from the server: a full disk, a cancelled statement, a conflict;
 * or the server unreachable, or the pool's wait for a connection running out) as `storage_failed`
 * with the SQLSTATE (or socket code), the same answer the SQLite store gives.
 */
function postgresFailure(err: unknown, what: string, hint?: string): AppError | null {
  const e = err as { name?: unknown; code?: unknown; message?: unknown; severity?: unknown } | null;
  if (e === null || typeof e !== 'object') return null;
  const message = String(e.message);
  let code: string | null = null;
  if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === 'string') code = e.code;
  else if (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) code = e.code;
  else if (/^(timeout exceeded when trying to connect|Connection terminated)/.test(message)) code = 'connection';
  if (code === null) return null;
  return new AppError('storage_failed', `${what}: the database failed (PostgreSQL ${code}: ${message})`, {
    details: { postgres_code: code },
    ...(hint !== undefined ? { hint } : {}),
    cause: err,
  });
}
