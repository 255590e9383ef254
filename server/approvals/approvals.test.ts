import { describe, expect, it, onTestFinished } from 'vitest';
import type { ApprovalRequestedPayload, ApprovalResolvedPayload } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { createApprovals } from './approvals.ts';

const plan = {
  repository: 'api',
  message: 'Fix',
  commit: 'staged' as const,
  files: [{ path: 'a.ts', additions: 2, deletions: 1, new: false, binary: false }],
};

function setup(timeoutMs = 10_000) {
  const requested: ApprovalRequestedPayload[] = [];
  const resolved: ApprovalResolvedPayload[] = [];
  const approvals = createApprovals({
    timeoutMs,
    requested: (p) => requested.push(p),
    resolved: (p) => resolved.push(p),
    now: () => 1_000,
  });
  return { approvals, requested, resolved };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return err instanceof AppError ? err.code : String(err);
  }
}

describe('commit approvals', () => {
  it('announces the plan exactly as the contract shapes it and lists it with its deadline', () => {
    const { approvals, requested } = setup(5_000);
    onTestFinished(() => approvals.close());
    void approvals.request(plan).catch(() => undefined);
    expect(requested).toEqual([
      {
        approval_id: expect.any(String),
        ...plan,
        session_id: null,
        session_title: null,
        agent: null,
        created_at: 1_000,
        expires_at: 6_000,
      },
    ]);
    expect(approvals.pending()).toEqual(requested);
  });

  it('approve resolves, deny rejects approval_denied; each outcome is announced once and the id is then gone', async () => {
    const { approvals, requested, resolved } = setup();
    const yes = approvals.request(plan);
    approvals.decide(requested[0]!.approval_id, 'approve');
    expect(await codeOf(yes)).toBe('resolved');
    const no = approvals.request(plan);
    approvals.decide(requested[1]!.approval_id, 'deny');
    expect(await codeOf(no)).toBe('approval_denied');
    expect(resolved.map((r) => r.decision)).toEqual(['approve', 'deny']);
    expect(() => approvals.decide(requested[0]!.approval_id, 'deny')).toThrow(/no longer pending \(approve\)/);
    expect(() => approvals.decide('unknown', 'approve')).toThrow(/no approval/);
    expect(approvals.pending()).toEqual([]);
  });

  it('times out with approval_timeout after timeoutMs', async () => {
    const { approvals, resolved } = setup(30);
    expect(await codeOf(approvals.request(plan))).toBe('approval_timeout');
    expect(resolved.map((r) => r.decision)).toEqual(['timeout']);
  });

  it('an aborted caller and a closing server withdraw their plans as cancelled', async () => {
    const { approvals, resolved } = setup();
    const ctrl = new AbortController();
    const gone = approvals.request(plan, ctrl.signal);
    ctrl.abort();
    expect(await codeOf(gone)).toBe('approval_denied');
    const left = approvals.request(plan);
    approvals.close();
    expect(await codeOf(left)).toBe('approval_denied');
    expect(resolved.map((r) => r.decision)).toEqual(['cancelled', 'cancelled']);
    const already = new AbortController();
    already.abort();
    expect(await codeOf(approvals.request(plan, already.signal))).toBe('approval_denied');
  });
});
