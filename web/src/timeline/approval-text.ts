/** Who asks for a commit, in words: `claude-code in session "Parser fixes"`, or `An agent`. */
export function approvalAsker(a: { agent: string | null; session_title: string | null; session_id: string | null }): {
  agent: string;
  session: string | null;
} {
  const session = a.session_id === null ? null : a.session_title || a.session_id;
  return { agent: a.agent ?? 'An agent', session };
}

/** The time left, `1:05`, `0:09`; null once it has run out (the prompt then says it is expiring). */
export function countdownText(expiresAt: number, now: number): string | null {
  const s = Math.max(0, Math.ceil((expiresAt - now) / 1000));
  if (s === 0) return null;
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** The tool session the approval prompt reads a file's diff in: never the agent's own review. */
export const APPROVAL_TOOL_SESSION_PREFIX = 'web-approval-';

/**
 * True for a logged call the approval prompt itself made (its `git_diff` reads), from the call's
 * recorded arguments: the JSON input, or its first 2,000 characters ending in `…` when cut.
 */
export function isApprovalPromptCall(call: { tool: string; arguments: string | null }): boolean {
  if (call.tool !== 'git_diff' || call.arguments === null) return false;
  let session: unknown;
  try {
    session = (JSON.parse(call.arguments) as { tool_session?: unknown }).tool_session;
  } catch {
    // A cut text: the prompt sends tool_session first, so it is whole at the start.
    session = /^\{"tool_session":"([^"\\]*)"/.exec(call.arguments)?.[1];
  }
  return typeof session === 'string' && session.startsWith(APPROVAL_TOOL_SESSION_PREFIX);
}
