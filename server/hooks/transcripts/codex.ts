import type { RunUsage } from '../../../shared/index.ts';
import { isObject, str } from '../agents/kit.ts';
import { sumUsage, tokenCount, type TranscriptUsage } from '../transcript.ts';

/**
 * Codex's session log (its "rollout", `transcript_path` of every hook payload), as Codex 0.169.0
 * writes it: after each answer of the model a `token_usage_record` line whose payload names the
 * turn (`turn_id`, the hook payloads' turn id and so the run's id), the answer (`response_id`) and
 * that answer's `usage` as the Responses API reported it. The run's usage is the sum over its
 * turn's answers, each answer once (its last line).
 *
 * The Responses API counts cached input inside `input_tokens` (`cached_input_tokens` is the part
 * read from the cache), so `input` is the difference; `cache_write_input_tokens` is taken as
 * written; `output_tokens` includes the reasoning tokens.
 */
export const codexUsage: TranscriptUsage = (entries, turnId) => {
  if (turnId === null) return null;
  const byResponse = new Map<string, RunUsage>();
  for (const e of entries) {
    if (e.type !== 'token_usage_record' || !isObject(e.payload) || e.payload.turn_id !== turnId) continue;
    const id = str(e.payload.response_id);
    const usage = responsesUsage(e.payload.usage);
    if (id === undefined || usage === null) continue;
    byResponse.delete(id);
    byResponse.set(id, usage);
  }
  return sumUsage(byResponse.values());
};

function responsesUsage(u: unknown): RunUsage | null {
  if (!isObject(u) || typeof u.input_tokens !== 'number' || typeof u.output_tokens !== 'number') return null;
  const input = tokenCount(u.input_tokens);
  const output = tokenCount(u.output_tokens);
  const cache_read = tokenCount(u.cached_input_tokens);
  const cache_write = tokenCount(u.cache_write_input_tokens);
  if (input === null || output === null || cache_read === null || cache_write === null) return null;
  if (cache_read > input) return null;
  return { input: input - cache_read, output, cache_read, cache_write };
}
