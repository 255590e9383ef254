import type { HookReply, ReplySlot } from '../types.ts';
import { asObject, str } from './common.ts';

/**
 * The hook answers that carry text to an agent, for the agents whose documentation names a field
 * for it. Every answer is a plain object the server serialises whole with JSON.stringify.
 */

/**
 * Claude Code: UserPromptSubmit's `hookSpecificOutput.additionalContext` is added to the prompt's
 * context; a Stop hook's `{decision: "block", reason}` keeps the agent going with the reason as its
 * next instruction. `stop_hook_active` is true when the agent already continues because of a stop
 * hook: answering again there could loop, so such a stop gets nothing.
 */
export const claudeCodeReply: HookReply = {
  slot(payload) {
    const p = asObject(payload);
    const event = str(p, 'hook_event_name');
    if (event === 'UserPromptSubmit') return 'prompt';
    if (event === 'Stop' && p?.stop_hook_active !== true) return 'stop';
    return null;
  },
  answer: (slot: ReplySlot, text: string) =>
    slot === 'prompt'
      ? { hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: text } }
      : { decision: 'block', reason: text },
};

/** Codex: UserPromptSubmit answers the same `hookSpecificOutput.additionalContext` (developer context). */
export const codexReply: HookReply = {
  slot: (payload) => (str(asObject(payload), 'hook_event_name') === 'UserPromptSubmit' ? 'prompt' : null),
  answer: (_slot, text) => ({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: text } }),
};

/** Gemini CLI: BeforeAgent's `hookSpecificOutput.additionalContext` is appended to that turn's prompt. */
export const geminiReply: HookReply = {
  slot: (payload) => (str(asObject(payload), 'hook_event_name') === 'BeforeAgent' ? 'prompt' : null),
  answer: (_slot, text) => ({ hookSpecificOutput: { hookEventName: 'BeforeAgent', additionalContext: text } }),
};
