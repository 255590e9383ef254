/** Who asks for a commit, in words: `claude-code in session "Parser fixes"`, or `An agent`. */
export function approvalAsker(a: { agent: string | null; session_title: string | null; session_id: string | null }): {
  agent: string;
  session: string | null;
} {
  const session = a.session_id === null ? null : a.session_title || a.session_id;
  return { agent: a.agent ?? 'An agent', session };
}

/** `1:05 left`, `0:09 left`, `expired`. */
export function countdownText(expiresAt: number, now: number): string {
  const s = Math.max(0, Math.ceil((expiresAt - now) / 1000));
  if (s === 0) return 'expiring';
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')} left`;
}
