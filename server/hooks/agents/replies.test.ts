import { describe, expect, it } from 'vitest';
import { MAPPERS } from './index.ts';
import { claudeCodeReply, codexReply, geminiReply } from './replies.ts';

/** Which hook answers can carry a review, and the exact answer each agent reads. */
describe('hook answers that carry a review', () => {
  const text = 'Review text with "quotes", a \\ backslash and\na line break';

  it('Claude Code: the prompt hook adds context; a stop hook not already continuing is asked to continue', () => {
    expect(claudeCodeReply.slot({ hook_event_name: 'UserPromptSubmit' })).toBe('prompt');
    expect(claudeCodeReply.slot({ hook_event_name: 'Stop', stop_hook_active: false })).toBe('stop');
    expect(claudeCodeReply.slot({ hook_event_name: 'Stop' })).toBe('stop');
    expect(claudeCodeReply.slot({ hook_event_name: 'Stop', stop_hook_active: true })).toBeNull();
    expect(claudeCodeReply.slot({ hook_event_name: 'PreToolUse' })).toBeNull();
    expect(claudeCodeReply.slot('not an object')).toBeNull();
    expect(JSON.parse(JSON.stringify(claudeCodeReply.answer('prompt', text)))).toEqual({
      hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: text },
    });
    expect(claudeCodeReply.answer('stop', text)).toEqual({ decision: 'block', reason: text });
  });

  it('Codex: UserPromptSubmit only; Gemini CLI: BeforeAgent only', () => {
    expect(codexReply.slot({ hook_event_name: 'UserPromptSubmit' })).toBe('prompt');
    expect(codexReply.slot({ hook_event_name: 'Stop' })).toBeNull();
    expect(codexReply.answer('prompt', text)).toEqual({
      hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: text },
    });
    expect(geminiReply.slot({ hook_event_name: 'BeforeAgent' })).toBe('prompt');
    expect(geminiReply.slot({ hook_event_name: 'AfterAgent' })).toBeNull();
    expect(geminiReply.answer('prompt', text)).toEqual({
      hookSpecificOutput: { hookEventName: 'BeforeAgent', additionalContext: text },
    });
  });

  it('each answer carries at most what its agent hands the model whole: Claude Code under its 10,000-character cap, Codex under 2,500 tokens', () => {
    expect(claudeCodeReply.bound).toEqual({ max: 9000, unit: 'chars' });
    expect(codexReply.bound).toEqual({ max: 6000, unit: 'bytes' });
    expect(geminiReply.bound).toEqual({ max: 32 * 1024, unit: 'bytes', noAngleBrackets: true });
  });

  it('only the agents with a documented prompt-context answer have one', () => {
    const withReply = Object.values(MAPPERS)
      .filter((m) => m.reply !== undefined)
      .map((m) => m.agent);
    expect(withReply).toEqual(['claude-code', 'codex', 'gemini']);
  });
});
