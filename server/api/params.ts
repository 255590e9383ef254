import { AppError } from '../errors.ts';
import { isValidId, type ChangeIdResolver } from '../runs/index.ts';

/** Path and query parameters. Express has already percent-decoded path parameters (once). */

export function idParam(value: unknown, name: string): string {
  if (typeof value !== 'string' || !isValidId(value)) {
    throw new AppError('invalid_input', `${name} must be 1-200 printable characters`, { details: { field: name } });
  }
  return value;
}

/** `run:<run_id>` or `tool:<tool_call_id>`; any other value cannot name a change. */
export function changeIdParam(value: unknown): string {
  const m = typeof value === 'string' ? /^(run|tool):(.*)$/s.exec(value) : null;
  if (!m || !isValidId(m[2]!)) {
    throw new AppError(
      'invalid_input',
      'changeId must be run:<run_id> or tool:<tool_call_id> (percent-encode the ":")',
      {
        details: { field: 'changeId' },
      },
    );
  }
  return value as string;
}

/** A change id parameter as the change it names in the session: a short id (`run:cc3e822d`) resolved. */
export async function changeIdIn(resolve: ChangeIdResolver, sessionId: string, value: unknown): Promise<string> {
  return resolve(sessionId, changeIdParam(value));
}

/**
 * An optional whole-number query parameter. Values above `max` are clamped (a client asking for
 * more simply gets the most a page holds); anything else not a whole number in range is refused,
 * with a message that says which: not a whole number, below the minimum, or too large to be exact.
 */
export function intQuery(value: unknown, name: string, opts: { min: number; max?: number }): number | null {
  if (value === undefined || value === '') return null;
  const refuse = (message: string) => new AppError('invalid_input', message, { details: { field: name } });
  if (typeof value !== 'string' || !/^-?\d+$/.test(value)) throw refuse(`${name} must be a whole number`);
  const n = Number(value);
  if (n < opts.min) throw refuse(`${name} must be at least ${opts.min}`);
  if (!Number.isSafeInteger(n)) throw refuse(`${name} must be at most ${Number.MAX_SAFE_INTEGER}`);
  return opts.max !== undefined && n > opts.max ? opts.max : n;
}
