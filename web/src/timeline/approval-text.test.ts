import { describe, expect, it } from 'vitest';
import { approvalAsker, countdownText } from './approval-text.ts';

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

  it('counts down in minutes and seconds, rounding up, to "expiring"', () => {
    expect(countdownText(100_000, 35_000)).toBe('1:05 left');
    expect(countdownText(100_000, 90_500)).toBe('0:10 left');
    expect(countdownText(100_000, 100_000)).toBe('expiring');
    expect(countdownText(100_000, 200_000)).toBe('expiring');
  });
});
