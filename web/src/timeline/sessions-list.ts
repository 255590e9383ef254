import type { Session } from '../../../shared/index.ts';

/** Newest activity first; ties by id so the order is stable. */
export function sortSessions(list: Session[]): Session[] {
  return list.sort((a, b) => b.updated_at - a.updated_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** session.updated: insert or replace, keeping newest-first order. */
export function upsertSession(list: Session[], session: Session): Session[] {
  const rest = list.filter((s) => s.id !== session.id);
  rest.push(session);
  return sortSessions(rest);
}

/** session.deleted. */
export function removeSession(list: Session[], sessionId: string): Session[] {
  return list.filter((s) => s.id !== sessionId);
}

/** The next page of the list is appended; ids already present (moved by live updates) are skipped. */
export function appendPage(list: Session[], page: readonly Session[]): Session[] {
  const known = new Set(list.map((s) => s.id));
  return sortSessions([...list, ...page.filter((s) => !known.has(s.id))]);
}

/** "just now", "5 min ago", "3 h ago", then a date. `now` is passed in so tests fix time. */
export function relativeTime(ms: number, now: number): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 45) return 'just now';
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min ago`;
  const h = Math.round(min / 60);
  if (h < 24) return `${h} h ago`;
  const d = Math.round(h / 24);
  if (d < 7) return `${d} ${d === 1 ? 'day' : 'days'} ago`;
  return new Date(ms).toISOString().slice(0, 10);
}

/** `4.2 s`, `850 ms`, `3 min 5 s`: the CLI writes a command's outcome the same way. */
export { formatDuration } from '../../../shared/index.ts';
