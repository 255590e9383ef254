import { randomUUID } from 'node:crypto';
import {
  MAX_DENY_REASON_CHARS,
  type ApprovalRequestedPayload,
  type ApprovalRequester,
  type ApprovalResolvedPayload,
  type CommitPlan,
  type PendingApproval,
} from '../../shared/index.ts';
import { AppError } from '../errors.ts';

/**
 * Commit approval (`serve --require-commit-approval`): a commit's plan waits here for a person's
 * decision. Each request is announced (`tool.approval.requested`) and every outcome is announced once
 * (`tool.approval.resolved`): approve, deny, timeout, or cancelled when the caller went away.
 */

export type ApprovalDecision = 'approve' | 'deny';

export interface ApprovalsOptions {
  /** How long a plan waits for a decision (ms). RUNDIFF_APPROVAL_TIMEOUT_MS. */
  timeoutMs: number;
  requested(payload: ApprovalRequestedPayload): void;
  resolved(payload: ApprovalResolvedPayload): void;
  now?: () => number;
}

interface Waiting {
  pending: PendingApproval;
  finish(outcome: ApprovalResolvedPayload['decision'], error: AppError | null, reason?: string | null): void;
}

const NO_REQUESTER: ApprovalRequester = { session_id: null, session_title: null, agent: null };

/** A denial's reason as sent back to the agent: trimmed, empty is none. */
export function denyReason(reason: string | null | undefined): string | null {
  const r = (reason ?? '').trim();
  if (r.length > MAX_DENY_REASON_CHARS) {
    throw new AppError('invalid_input', `reason must be at most ${MAX_DENY_REASON_CHARS} characters`, {
      details: { field: 'reason' },
    });
  }
  return r === '' ? null : r;
}

/** Outcomes remembered after the fact, so a late click is told what happened rather than "unknown". */
const REMEMBERED = 500;

export function createApprovals(opts: ApprovalsOptions) {
  const now = opts.now ?? Date.now;
  const waiting = new Map<string, Waiting>();
  const decided = new Map<string, ApprovalResolvedPayload['decision']>();

  function remember(id: string, decision: ApprovalResolvedPayload['decision']): void {
    decided.set(id, decision);
    for (const old of decided.keys()) {
      if (decided.size <= REMEMBERED) break;
      decided.delete(old);
    }
  }

  /**
   * Announces the plan and resolves with its approval id once a person approves; rejects with
   * `approval_denied`, `approval_timeout`, or `approval_denied` when `signal` aborts (the caller disconnected).
   */
  function request(
    plan: CommitPlan,
    signal?: AbortSignal,
    requester: Partial<ApprovalRequester> = {},
  ): Promise<string> {
    const id = randomUUID();
    const t = now();
    const pending: PendingApproval = {
      approval_id: id,
      repository: plan.repository,
      message: plan.message,
      commit: plan.commit,
      files: plan.files.map((f) => ({
        path: f.path,
        additions: f.additions,
        deletions: f.deletions,
        new: f.new,
        binary: f.binary,
      })),
      ...NO_REQUESTER,
      ...requester,
      created_at: t,
      expires_at: t + opts.timeoutMs,
    };
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        entry.finish(
          'timeout',
          new AppError('approval_timeout', `nobody decided on the commit within ${opts.timeoutMs} ms`, {
            hint: 'Ask the person watching the rundiff web UI to approve it, then call git_commit again.',
            details: { approval_id: id, timeout_ms: opts.timeoutMs },
          }),
        );
      }, opts.timeoutMs);
      timer.unref();
      const onAbort = () =>
        entry.finish(
          'cancelled',
          new AppError('approval_denied', 'the commit request was withdrawn before a decision', {
            details: { approval_id: id },
          }),
        );
      const entry: Waiting = {
        pending,
        finish(outcome, error, reason = null) {
          if (!waiting.delete(id)) return;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          remember(id, outcome);
          opts.resolved({ approval_id: id, decision: outcome, reason });
          if (error) reject(error);
          else resolve(id);
        },
      };
      if (signal?.aborted) {
        clearTimeout(timer);
        reject(new AppError('approval_denied', 'the commit request was withdrawn before a decision'));
        return;
      }
      waiting.set(id, entry);
      signal?.addEventListener('abort', onAbort, { once: true });
      opts.requested({ ...pending, files: [...pending.files] });
    });
  }

  /**
   * A person's decision; `not_found` for an unknown id or one already decided, timed out or withdrawn.
   * A denial's reason goes back to the agent in the git_commit error (message and `details.reason`).
   */
  function decide(id: string, decision: ApprovalDecision, rawReason?: string | null): ApprovalResolvedPayload {
    const reason = decision === 'deny' ? denyReason(rawReason) : null;
    const entry = waiting.get(id);
    if (!entry) {
      const before = decided.get(id);
      if (before !== undefined) {
        throw new AppError('not_found', `approval ${JSON.stringify(id)} is no longer pending (${before})`, {
          hint: 'Each approval is decided once; it may also have timed out or been withdrawn by the agent.',
          details: { approval_id: id, outcome: before },
        });
      }
      throw new AppError('not_found', `no approval ${JSON.stringify(id)}`, { details: { approval_id: id } });
    }
    entry.finish(
      decision,
      decision === 'approve'
        ? null
        : new AppError(
            'approval_denied',
            reason ? `a person denied the commit: ${reason}` : 'a person denied the commit',
            {
              hint: reason
                ? 'Do not retry the same commit; change what the reason asks for first.'
                : 'Do not retry the same commit; ask what should change.',
              details: { approval_id: id, reason },
            },
          ),
      reason,
    );
    return { approval_id: id, decision, reason };
  }

  return {
    request,
    decide,
    /** Waiting plans, oldest first (a page opened later shows them). */
    pending(): PendingApproval[] {
      return [...waiting.values()].map((w) => ({ ...w.pending, files: [...w.pending.files] }));
    },
    /** Withdraws every waiting plan (server shutdown). */
    close(): void {
      for (const w of [...waiting.values()]) {
        w.finish(
          'cancelled',
          new AppError('approval_denied', 'the rundiff server is shutting down', {
            details: { approval_id: w.pending.approval_id },
          }),
        );
      }
    },
  };
}

export type Approvals = ReturnType<typeof createApprovals>;
