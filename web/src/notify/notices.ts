import type { ApprovalRequestedPayload, Session } from '../../../shared/index.ts';

/**
 * What is worth telling a person who is not looking at the page: a run that ended or failed, a
 * commit waiting for approval. Pure: the store decides when to show them (`stores/notices.ts`).
 */
export interface Notice {
  /** One per event, so a notification is not shown twice for it. */
  key: string;
  title: string;
  body: string;
  /** The session to open when the notice is clicked; null for the tools page. */
  sessionId: string | null;
}

/** What a session row says about its runs, kept per session between updates. */
export type RunCounts = Pick<Session, 'run_count' | 'failed_run_count' | 'running_run_count'>;

export const countsOf = (s: Session): RunCounts => ({
  run_count: s.run_count,
  failed_run_count: s.failed_run_count,
  running_run_count: s.running_run_count,
});

const lastPart = (p: string): string => p.split('/').filter(Boolean).pop() ?? p;

/** The name a notice gives a session: its title, else its workspace folder, else its id. */
export function sessionName(s: Pick<Session, 'id' | 'title' | 'workspace'>): string {
  return s.title?.trim() || (s.workspace ? lastPart(s.workspace) : s.id);
}

/**
 * The notice a session update brings: a run of it ended since `before` (fewer running, and a
 * failure counted if it failed). Null when nothing ended, or when the session was not known before
 * (an update seen for the first time says nothing about what changed).
 */
export function runNotice(before: RunCounts | undefined, after: Session): Notice | null {
  if (!before || after.running_run_count >= before.running_run_count) return null;
  const ended = before.running_run_count - after.running_run_count;
  const failed = Math.min(ended, Math.max(0, after.failed_run_count - before.failed_run_count));
  const name = sessionName(after);
  const runs = (n: number) => (n === 1 ? 'A run' : `${n} runs`);
  const title =
    failed === 0
      ? `${runs(ended)} finished`
      : failed === ended
        ? `${runs(failed)} failed`
        : `${runs(ended)} ended, ${failed} failed`;
  const still = after.running_run_count > 0 ? ` (${after.running_run_count} still running)` : '';
  return {
    key: `run:${after.id}:${after.run_count}:${after.failed_run_count}:${after.running_run_count}`,
    title: `${title} · ${name}`,
    body: `${name}${after.workspace ? ` in ${after.workspace}` : ''}${still}`,
    sessionId: after.id,
  };
}

/** The notice of a commit that waits for a decision. */
export function approvalNotice(a: ApprovalRequestedPayload): Notice {
  const who = a.session_title ?? a.agent;
  const subject = a.message.split('\n', 1)[0]!.trim();
  return {
    key: `approval:${a.approval_id}`,
    title: `A commit waits for your approval${who ? ` · ${who}` : ''}`,
    body: `${lastPart(a.repository)}: ${subject || '(no message)'} (${a.files.length} file${a.files.length === 1 ? '' : 's'})`,
    sessionId: null,
  };
}

/** The tab's title with `unseen` in front, as mail and chat pages do: `(3) rundiff`. */
export function titleWithCount(base: string, unseen: number): string {
  const plain = base.replace(/^\(\d+\) /, '');
  return unseen > 0 ? `(${unseen}) ${plain}` : plain;
}
