import { AppError } from '../errors.ts';

/**
 * A database failure as an answer that names it. SQLite's own errors (a full disk or a lowered
 * page limit: `SQLITE_FULL`; a read-only file; an I/O error) become `storage_failed` with the
 * SQLite code, so a client and the log see the real cause instead of a bare "internal error".
 * Anything else is not a storage failure: null.
 */
export function storageFailure(err: unknown, what: string, hint?: string): AppError | null {
  const e = err as { name?: unknown; code?: unknown; message?: unknown } | null;
  if (e?.name !== 'SqliteError' || typeof e.code !== 'string' || !e.code.startsWith('SQLITE_')) return null;
  return new AppError('storage_failed', `${what}: the database refused the write (${e.code}: ${String(e.message)})`, {
    details: { sqlite_code: e.code },
    ...(hint !== undefined ? { hint } : {}),
    cause: err,
  });
}
