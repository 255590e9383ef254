import { MAX_REVIEW_TEXT_BYTES, type ReviewTextBound } from '../../../shared/index.ts';
import type { HookReply, ReplySlot } from '../types.ts';
import { isObject, str } from './kit.ts';

/**
 * The hook answers that carry text to an agent, for the agents whose documentation names a field
 * for it. Every answer is a plain object the server serialises whole with JSON.stringify.
 */

/**
 * Claude Code hands the model a hook's `additionalContext` (or Stop `reason`) only up to 10,000
 * characters (its string length); a longer one is saved to a file and the model sees
 * `<persisted-output> Output too large (…KB). Full output saved to: … Preview (first 2KB)`.
 * Measured with Claude Code 2.1.328: a review text of 8,916 characters arrived whole, one of 10,118
 * was replaced that way. 9,000 characters stays safely under the cap (the JSON around the text is
 * not counted by Claude Code, only the field's value).
 */
export const CLAUDE_CODE_TEXT_BOUND: ReviewTextBound = { max: 9000, unit: 'chars' };

/**
 * Codex spills hook context above its `additionalContextLimit` (2,500 tokens unless the hook's
 * configuration raises it; rundiff's installed hooks do not) to a file with a preview. 6,000 UTF-8
 * bytes is about 1,500-2,000 tokens of code or prose and at most about 2,000 of CJK text, under the
 * limit with room to spare.
 */
export const CODEX_TEXT_BOUND: ReviewTextBound = { max: 6000, unit: 'bytes' };

/**
 * Gemini CLI appends BeforeAgent's `additionalContext` to the prompt with no cap found in its
 * documentation or code checked here: rundiff's general bound. It wraps the text in
 * `<hook_context>` and writes every `<` and `>` in it as `&lt;`/`&gt;` (Gemini CLI 0.61.0), so the
 * text is built without them.
 */
export const GEMINI_TEXT_BOUND: ReviewTextBound = { max: MAX_REVIEW_TEXT_BYTES, unit: 'bytes', noAngleBrackets: true };

const eventName = (payload: unknown): string | undefined =>
  isObject(payload) ? str(payload.hook_event_name) : undefined;

/**
 * Claude Code: UserPromptSubmit's `hookSpecificOutput.additionalContext` is added to the prompt's
 * context; a Stop hook's `{decision: "block", reason}` keeps the agent going with the reason as its
 * next instruction. `stop_hook_active` is true when the agent already continues because of a stop
 * hook: answering again there could loop, so such a stop gets nothing.
 */
export const claudeCodeReply: HookReply = {
  bound: CLAUDE_CODE_TEXT_BOUND,
  slot(payload) {
    const p = isObject(payload) ? payload : {};
    const event = str(p.hook_event_name);
    if (event === 'UserPromptSubmit') return 'prompt';
    if (event === 'Stop' && p.stop_hook_active !== true) return 'stop';
    return null;
  },
  answer: (slot: ReplySlot, text: string) =>
    slot === 'prompt'
      ? { hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: text } }
      : { decision: 'block', reason: text },
};

/** Codex: UserPromptSubmit answers the same `hookSpecificOutput.additionalContext` (developer context). */
export const codexReply: HookReply = {
  bound: CODEX_TEXT_BOUND,
  slot: (payload) => (eventName(payload) === 'UserPromptSubmit' ? 'prompt' : null),
  answer: (_slot, text) => ({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: text } }),
};

/** Gemini CLI: BeforeAgent's `hookSpecificOutput.additionalContext` is appended to that turn's prompt. */
export const geminiReply: HookReply = {
  bound: GEMINI_TEXT_BOUND,
  slot: (payload) => (eventName(payload) === 'BeforeAgent' ? 'prompt' : null),
  answer: (_slot, text) => ({ hookSpecificOutput: { hookEventName: 'BeforeAgent', additionalContext: text } }),
};
