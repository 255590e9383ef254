import type { BlameOrigin } from '../../../shared/index.ts';
import { relativeTime } from './sessions-list.ts';

/** Characters of a run's title or prompt a blame line shows. */
const LABEL_CHARS = 40;

const cut = (s: string) => (s.length > LABEL_CHARS ? `${s.slice(0, LABEL_CHARS - 1)}…` : s);

/** A blame line's short label: the run's title, else its prompt, else its short id; or where the chain breaks. */
export function blameLabel(o: BlameOrigin): string {
  const run =
    o.run_title ?? (o.prompt !== null ? o.prompt.replace(/\s+/g, ' ').trim() : null) ?? o.run_id?.slice(0, 8) ?? '';
  switch (o.kind) {
    case 'tool_call':
    case 'run':
      return cut(run);
    case 'outside':
      return 'changed outside rundiff';
    case 'before_runs':
      return 'before any recorded run';
    case 'not_kept':
      return 'contents not kept';
    case 'truncated':
      return 'older than the changes walked';
  }
}

/** The second part of a blame line: agent and tool, and when (relative to `now`). */
export function blameMeta(o: BlameOrigin, now: number): string {
  if (o.kind === 'outside') {
    const to = o.to !== null ? relativeTime(o.to, now) : null;
    return to === null ? 'between runs' : `before ${to}`;
  }
  if (o.kind !== 'run' && o.kind !== 'tool_call' && o.kind !== 'not_kept') return '';
  const who = [o.agent, o.kind === 'tool_call' ? o.tool_name : null].filter(Boolean).join(' · ');
  return [who, o.at !== null ? relativeTime(o.at, now) : null].filter(Boolean).join(' · ');
}
