import { describe, expect, it } from 'vitest';
import type { ApprovalRequestedPayload, Session } from '../../../shared/index.ts';
import { approvalNotice, countsOf, runNotice, titleWithCount } from './notices.ts';

const session = (o: Partial<Session> = {}): Session => ({
  id: 's1',
  title: 'Fix login',
  workspace: '/home/me/app',
  created_at: 1,
  updated_at: 2,
  run_count: 1,
  changed_count: 0,
  failed_run_count: 0,
  running_run_count: 1,
  last_run_status: 'running',
  usage: null,
  ...o,
});

describe('run notices', () => {
  it('a run that ends says it finished, naming the session', () => {
    const before = countsOf(session());
    const n = runNotice(before, session({ running_run_count: 0, last_run_status: 'completed' }));
    expect(n).toMatchObject({
      title: 'A run finished · Fix login',
      body: 'Fix login in /home/me/app',
      sessionId: 's1',
    });
  });
  it('a run that fails says so, and another still running is counted', () => {
    const before = countsOf(session({ run_count: 2, running_run_count: 2 }));
    const n = runNotice(before, session({ run_count: 2, running_run_count: 1, failed_run_count: 1 }));
    expect(n?.title).toBe('A run failed · Fix login');
    expect(n?.body).toBe('Fix login in /home/me/app (1 still running)');
  });
  it('two runs ending at once, one failed', () => {
    const before = countsOf(session({ run_count: 2, running_run_count: 2 }));
    const n = runNotice(before, session({ run_count: 2, running_run_count: 0, failed_run_count: 1 }));
    expect(n?.title).toBe('2 runs ended, 1 failed · Fix login');
  });
  it('nothing when no run ended (a run started, or the session was not known before)', () => {
    expect(runNotice(countsOf(session({ running_run_count: 0 })), session())).toBeNull();
    expect(runNotice(countsOf(session()), session({ title: 'renamed' }))).toBeNull();
    expect(runNotice(undefined, session({ running_run_count: 0 }))).toBeNull();
  });
  it('a session without a title is named by its folder; each end has its own key', () => {
    const before = countsOf(session());
    const a = runNotice(before, session({ title: null, running_run_count: 0 }));
    expect(a?.title).toBe('A run finished · app');
    const b = runNotice(
      countsOf(session({ run_count: 2 })),
      session({ title: null, run_count: 2, running_run_count: 0 }),
    );
    expect(a?.key).not.toBe(b?.key);
  });
});

describe('approval notices and the tab title', () => {
  it('a commit waiting names who asks, the repository, the subject line and the files', () => {
    const a = {
      approval_id: 'ap1',
      repository: '/home/me/app',
      message: 'Fix <b>login</b>\n\nbody',
      commit: 'paths',
      files: [{}, {}],
      created_at: 1,
      expires_at: 2,
      session_id: 's1',
      session_title: 'Fix login',
      agent: 'claude-code',
    } as unknown as ApprovalRequestedPayload;
    expect(approvalNotice(a)).toEqual({
      key: 'approval:ap1',
      title: 'A commit waits for your approval · Fix login',
      body: 'app: Fix <b>login</b> (2 files)',
      sessionId: null,
    });
  });
  it('the count goes in front of the title and away at zero', () => {
    expect(titleWithCount('rundiff', 3)).toBe('(3) rundiff');
    expect(titleWithCount('(3) rundiff', 4)).toBe('(4) rundiff');
    expect(titleWithCount('(4) rundiff', 0)).toBe('rundiff');
  });
});
