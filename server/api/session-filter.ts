import type { SessionFilter, SessionStatusFilter } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { intQuery } from './params.ts';

/** Longest `q` accepted: a search, not a document. */
export const MAX_SESSION_QUERY_CHARS = 200;
/** Longest `workspace` accepted (a path). */
export const MAX_WORKSPACE_CHARS = 4096;

const LIST_PARAMS = new Set(['limit', 'before', 'q', 'status', 'workspace', 'from', 'to']);
const STATUSES: readonly SessionStatusFilter[] = ['running', 'failed', 'completed', 'none'];

function invalid(field: string, message: string): AppError {
  return new AppError('invalid_input', message, { details: { field } });
}

function textQuery(value: unknown, name: string, maxChars: number): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw invalid(name, `${name} must be given once, as text`);
  if (value.length > maxChars) throw invalid(name, `${name} must be at most ${maxChars} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw invalid(name, `${name} must not contain control characters`);
  return value;
}

/**
 * The sessions list's query: a misspelt or repeated parameter is refused rather than ignored, so a
 * filter the server does not know never looks like one that matched everything.
 */
export function sessionFilterQuery(query: Record<string, unknown>): SessionFilter {
  const unknown = Object.keys(query).filter((k) => !LIST_PARAMS.has(k));
  if (unknown.length > 0) {
    throw new AppError(
      'invalid_input',
      `unknown query parameter ${JSON.stringify(unknown[0])}; the sessions list takes ${[...LIST_PARAMS].join(', ')}`,
      { details: { field: unknown[0] } },
    );
  }
  const filter: SessionFilter = {};
  const q = textQuery(query.q, 'q', MAX_SESSION_QUERY_CHARS);
  if (q !== undefined) filter.q = q;
  const status = textQuery(query.status, 'status', 20);
  if (status !== undefined) {
    if (!(STATUSES as readonly string[]).includes(status))
      throw invalid('status', `status must be one of ${STATUSES.join(', ')}`);
    filter.status = status as SessionStatusFilter;
  }
  const workspace = textQuery(query.workspace, 'workspace', MAX_WORKSPACE_CHARS);
  if (workspace !== undefined) filter.workspace = workspace;
  const from = intQuery(query.from, 'from', { min: 0 });
  if (from !== null) filter.from = from;
  const to = intQuery(query.to, 'to', { min: 0 });
  if (to !== null) filter.to = to;
  if (from !== null && to !== null && from > to) throw invalid('from', 'from must not be later than to');
  return filter;
}
