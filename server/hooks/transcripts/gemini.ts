import type { RunUsage } from '../../../shared/index.ts';
import { isObject, str } from '../agents/kit.ts';
import { sumUsage, tokenCount, type TranscriptUsage } from '../transcript.ts';

/**
 * Gemini CLI's chat log (`transcript_path` of every hook payload), as Gemini CLI 0.61.0 writes it:
 * one message a line (`id`, `type` "user" or "gemini"); a message written again under the same id
 * replaces the earlier line (a model answer is written once as it arrives and again with its tool
 * calls); a `{"$set": {"messages": [...]}}` line replaces the whole list (a resumed session starts
 * with one). A model message carries `tokens` {input, output, cached, thoughts, tool} from the
 * API's usage metadata.
 *
 * Gemini names no turns: the run is what follows the last prompt the person typed (a user message
 * with text; a tool's answer, `functionResponse`, is not one), read when the run ends (AfterAgent).
 * Gemini counts cached input inside `input`, so `input` is the difference plus the tool-use prompt
 * tokens (`tool`); `output` adds the thinking tokens (`thoughts`); Gemini reports no cache writes (0).
 */
export const geminiUsage: TranscriptUsage = (entries) => {
  const messages = messagesOf(entries);
  let start = -1;
  for (let i = messages.length - 1; i >= 0 && start < 0; i--) if (isTypedPrompt(messages[i]!)) start = i;
  if (start < 0) return null;
  const calls: RunUsage[] = [];
  for (const m of messages.slice(start + 1)) {
    if (m.type !== 'gemini') continue;
    const usage = geminiTokens(m.tokens);
    if (usage !== null) calls.push(usage);
  }
  return sumUsage(calls);
};

/** The chat's messages as the log leaves them: the last line of each id, in first-seen order. */
function messagesOf(entries: Record<string, unknown>[]): Record<string, unknown>[] {
  let order: string[] = [];
  let byId = new Map<string, Record<string, unknown>>();
  const put = (m: unknown) => {
    if (!isObject(m)) return;
    const id = str(m.id);
    if (id === undefined || str(m.type) === undefined) return;
    if (!byId.has(id)) order.push(id);
    byId.set(id, m);
  };
  for (const e of entries) {
    if (isObject(e.$set) && Array.isArray(e.$set.messages)) {
      order = [];
      byId = new Map();
      for (const m of e.$set.messages) put(m);
    } else put(e);
  }
  return order.map((id) => byId.get(id)!);
}

function isTypedPrompt(m: Record<string, unknown>): boolean {
  if (m.type !== 'user') return false;
  if (typeof m.content === 'string') return m.content !== '';
  return (
    Array.isArray(m.content) &&
    m.content.some((p: unknown) => isObject(p) && typeof p.text === 'string') &&
    !m.content.some((p: unknown) => isObject(p) && p.functionResponse !== undefined)
  );
}

function geminiTokens(t: unknown): RunUsage | null {
  if (!isObject(t) || typeof t.input !== 'number' || typeof t.output !== 'number') return null;
  const input = tokenCount(t.input);
  const output = tokenCount(t.output);
  const cached = tokenCount(t.cached);
  const thoughts = tokenCount(t.thoughts);
  const tool = tokenCount(t.tool);
  if (input === null || output === null || cached === null || thoughts === null || tool === null) return null;
  if (cached > input) return null;
  return { input: input - cached + tool, output: output + thoughts, cache_read: cached, cache_write: 0 };
}
