import type { RunUsage } from '../../../shared/index.ts';
import { isObject, str } from '../agents/kit.ts';
import { sumUsage, tokenCount, type TranscriptUsage } from '../transcript.ts';

/**
 * Claude Code's transcript: an assistant message's line carries `message.usage` as the model's API
 * answered it, and one message may be written on several lines with the same `message.id` (one per
 * content block), so each id is counted once (its last line: the final figures of a streamed answer).
 *
 * Which lines are the run's: those after the run's prompt. The prompt's line is the last `user`
 * line that carries the run's prompt id when the transcript names prompts, else the last `user`
 * line that is a typed prompt (text, not a tool's result, not a line the agent adds itself,
 * `isMeta`). The run's lines are those from there to the next typed prompt (or the end): the Stop
 * hook of a prompt runs when its answer is complete.
 */
export const claudeCodeUsage: TranscriptUsage = (entries, promptId) => {
  const start = promptIndex(entries, promptId);
  if (start < 0) return null;
  const byId = new Map<string, RunUsage>();
  for (const e of entries.slice(start + 1)) {
    // The next prompt starts the next run (a Stop read late, after it was typed).
    if (e.type === 'user' && isTypedPrompt(e)) break;
    if (e.type !== 'assistant' || !isObject(e.message)) continue;
    const id = str(e.message.id);
    const usage = anthropicUsage(e.message.usage);
    if (id === undefined || usage === null) continue;
    byId.delete(id);
    byId.set(id, usage);
  }
  return sumUsage(byId.values());
};

/** The index of the run's prompt line, or -1 when it is not among `entries`. */
function promptIndex(entries: Record<string, unknown>[], promptId: string | null): number {
  const named = entries.some((e) => e.type === 'user' && str(e.promptId) !== undefined);
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.type !== 'user') continue;
    if (named) {
      if (promptId !== null && e.promptId === promptId && isTypedPrompt(e)) return i;
    } else if (isTypedPrompt(e)) return i;
  }
  return -1;
}

/** A user line that is a prompt: text the user gave, not a tool's result or the agent's own note. */
function isTypedPrompt(e: Record<string, unknown>): boolean {
  if (e.isMeta === true || e.isCompactSummary === true || !isObject(e.message)) return false;
  const content = e.message.content;
  if (typeof content === 'string') return true;
  return (
    Array.isArray(content) &&
    !content.some((b: unknown) => isObject(b) && b.type === 'tool_result') &&
    content.length > 0
  );
}

/** The four figures of one Anthropic `usage` object; null when it is not one (no input or output count). */
function anthropicUsage(u: unknown): RunUsage | null {
  if (!isObject(u) || typeof u.input_tokens !== 'number' || typeof u.output_tokens !== 'number') return null;
  const input = tokenCount(u.input_tokens);
  const output = tokenCount(u.output_tokens);
  const cache_read = tokenCount(u.cache_read_input_tokens);
  const cache_write = tokenCount(u.cache_creation_input_tokens);
  if (input === null || output === null || cache_read === null || cache_write === null) return null;
  return { input, output, cache_read, cache_write };
}
