import { TRUNCATED_REASONS, type TruncatedReason } from '../../../shared/index.ts';
import { AppError } from '../../errors.ts';

export function addReason(list: TruncatedReason[], r: TruncatedReason): void {
  if (!list.includes(r)) list.push(r);
}

/** Reasons in the one order every answer lists them. */
export function sortReasons(list: readonly TruncatedReason[]): TruncatedReason[] {
  return TRUNCATED_REASONS.filter((r) => list.includes(r));
}

/** The reason a failed git call gives an answer: over its deadline, or anything else. */
export function reasonFor(err: unknown): TruncatedReason {
  return err instanceof AppError && err.code === 'git_timeout' ? 'git_timeout' : 'degraded';
}
