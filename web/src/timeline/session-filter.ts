import type { Session, SessionFilter, SessionStatusFilter } from '../../../shared/index.ts';

/**
 * The sessions list's filters as the page's URL holds them: dates are calendar days
 * (`YYYY-MM-DD`, the browser's time zone), so a link reads the same to whoever opens it.
 */
export interface ListFilter {
  q: string;
  status: SessionStatusFilter | '';
  workspace: string;
  /** First day shown, `YYYY-MM-DD` or ''. */
  from: string;
  /** Last day shown, `YYYY-MM-DD` or ''. */
  to: string;
}

export const EMPTY_FILTER: ListFilter = { q: '', status: '', workspace: '', from: '', to: '' };
export const STATUS_OPTIONS: readonly { value: SessionStatusFilter; label: string }[] = [
  { value: 'failed', label: 'With a failed run' },
  { value: 'running', label: 'Running now' },
  { value: 'completed', label: 'All runs completed' },
  { value: 'none', label: 'No runs' },
];

const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const STATUSES = new Set<string>(STATUS_OPTIONS.map((o) => o.value));

function one(value: unknown): string {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' ? v : '';
}

/** Reads the route query; values the list cannot use (a bad day, an unknown status) are dropped. */
export function filterFromQuery(query: Record<string, unknown>): ListFilter {
  const status = one(query.status);
  const day = (v: string) => (DAY_RE.test(v) && dayStart(v) !== null ? v : '');
  return {
    q: one(query.q),
    status: STATUSES.has(status) ? (status as SessionStatusFilter) : '',
    workspace: one(query.workspace),
    from: day(one(query.from)),
    to: day(one(query.to)),
  };
}

/** The route query for a filter: empty fields are left out, so the plain list keeps a plain URL. */
export function filterToQuery(f: ListFilter): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ['q', 'status', 'workspace', 'from', 'to'] as const) if (f[key] !== '') out[key] = f[key];
  return out;
}

export function isFiltered(f: ListFilter): boolean {
  return Object.keys(filterToQuery(f)).length > 0;
}

/** Local midnight of a `YYYY-MM-DD` day in ms, or null for a day that does not exist. */
function dayStart(day: string): number | null {
  const m = DAY_RE.exec(day);
  if (!m) return null;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return d.getMonth() === Number(m[2]) - 1 ? d.getTime() : null;
}

/** The server's filter: `from` is the first day's start, `to` the last day's final millisecond. */
export function toServerFilter(f: ListFilter): SessionFilter {
  const out: SessionFilter = {};
  if (f.q.trim() !== '') out.q = f.q.trim();
  if (f.status !== '') out.status = f.status;
  if (f.workspace !== '') out.workspace = f.workspace;
  const from = f.from ? dayStart(f.from) : null;
  if (from !== null) out.from = from;
  const toStart = f.to ? dayStart(f.to) : null;
  if (toStart !== null) {
    const next = new Date(toStart);
    next.setDate(next.getDate() + 1);
    out.to = next.getTime() - 1;
  }
  return out;
}

/** Mirrors the server's filter for sessions that arrive live (`session.updated`). */
export function matchesFilter(s: Session, f: SessionFilter): boolean {
  if (f.q !== undefined) {
    // SQLite's LIKE folds ASCII letters only; so does this.
    const fold = (t: string) => t.replace(/[A-Z]/g, (c) => c.toLowerCase());
    const needle = fold(f.q);
    if (!fold(s.title ?? '').includes(needle) && !fold(s.workspace ?? '').includes(needle)) return false;
  }
  if (f.workspace !== undefined && s.workspace !== f.workspace) return false;
  if (f.from !== undefined && s.updated_at < f.from) return false;
  if (f.to !== undefined && s.created_at > f.to) return false;
  switch (f.status) {
    case 'failed':
      return s.failed_run_count > 0;
    case 'running':
      return s.running_run_count > 0;
    case 'completed':
      return s.run_count > 0 && s.failed_run_count === 0 && s.running_run_count === 0;
    case 'none':
      return s.run_count === 0;
    default:
      return true;
  }
}
