import { describe, expect, it } from 'vitest';
import { approvalAsker, countdownText, isApprovalPromptCall } from './approval-text.ts';

describe('approval prompt text', () => {
  it('names the agent and the session (its title, else its id)', () => {
    expect(approvalAsker({ agent: 'claude-code', session_title: 'Fixes', session_id: 's1' })).toEqual({
      agent: 'claude-code',
      session: 'Fixes',
    });
    expect(approvalAsker({ agent: null, session_title: null, session_id: 's1' })).toEqual({
      agent: 'An agent',
      session: 's1',
    });
    expect(approvalAsker({ agent: null, session_title: null, session_id: null }).session).toBeNull();
  });

  it('counts down in minutes and seconds, rounding up, to null once run out ("Expires in 1:05", no "left")', () => {
    expect(countdownText(100_000, 35_000)).toBe('1:05');
    expect(countdownText(100_000, 90_500)).toBe('0:10');
    expect(countdownText(100_000, 100_000)).toBeNull();
    expect(countdownText(100_000, 200_000)).toBeNull();
  });

  it("tells the approval prompt's own diff reads from an agent's calls, also in a cut argument text", () => {
    const read = JSON.stringify({ tool_session: 'web-approval-1234', repository: 'ws2', path: 'a.txt' });
    expect(isApprovalPromptCall({ tool: 'git_diff', arguments: read })).toBe(true);
    expect(isApprovalPromptCall({ tool: 'git_diff', arguments: `${read.slice(0, 60)}…` })).toBe(true);
    expect(isApprovalPromptCall({ tool: 'git_diff', arguments: JSON.stringify({ tool_session: 'agent-7' }) })).toBe(
      false,
    );
    expect(isApprovalPromptCall({ tool: 'git_diff', arguments: '{"path":"web-approval-x"}' })).toBe(false);
    expect(isApprovalPromptCall({ tool: 'git_commit', arguments: read })).toBe(false);
    expect(isApprovalPromptCall({ tool: 'git_diff', arguments: null })).toBe(false);
  });
});
