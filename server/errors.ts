import { ERROR_STATUS, type ErrorBody, type ErrorCode } from '../shared/index.ts';

/** The one error type the server throws on purpose; the error middleware turns it into `{error: {...}}`. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { hint?: string; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.hint = opts.hint;
    this.details = opts.details;
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message };
    if (this.hint !== undefined) error.hint = this.hint;
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

/** Any thrown value as an AppError; unknown failures become `internal` without leaking a stack. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('internal', 'internal error', { cause: err });
}
