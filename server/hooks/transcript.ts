import path from 'node:path';
import type { RunUsage } from '../../shared/index.ts';
import { readRegularFileTail } from '../fs/safe-read.ts';
import { isObject, str } from './agents/kit.ts';

/**
 * What a run cost, from the agent's own transcript: Claude Code writes one JSON object a line
 * (`transcript_path` of every hook payload); an assistant message's line carries `message.usage`
 * as the model's API answered it, and one message may be written on several lines with the same
 * `message.id` (one per content block), so each id is counted once (its last line: the final
 * figures of a streamed answer).
 *
 * Which lines are the run's: those after the run's prompt. The prompt's line is the last `user`
 * line that carries the run's prompt id (`promptId`) when the transcript names prompts, else the
 * last `user` line that is a typed prompt (text, not a tool's result, not a line the agent adds
 * itself, `isMeta`). The run's lines are those from there to the next typed prompt (or the end):
 * the Stop hook of a prompt runs when its answer is complete.
 *
 * Bounds: the file must be an absolute `.jsonl` path to a regular file (never followed through a
 * final link); only its last `TRANSCRIPT_TAIL_BYTES` are read. A transcript that is gone, not
 * readable, whose run's prompt is not within the bytes read, or that names no usage gives no
 * figures (null): never a guess.
 */
export const TRANSCRIPT_TAIL_BYTES = 16 * 1024 * 1024;

export function transcriptUsage(
  transcriptPath: string,
  promptId: string | null,
  maxBytes = TRANSCRIPT_TAIL_BYTES,
): RunUsage | null {
  if (!path.isAbsolute(transcriptPath) || !transcriptPath.endsWith('.jsonl')) return null;
  // One byte more than the bound: when it is a newline, the first line read is whole.
  const tail = readRegularFileTail(transcriptPath, maxBytes + 1);
  if (tail === null) return null;
  const lines = tail.bytes.toString('utf8').split('\n');
  // A tail that starts inside a line: that line is not whole.
  if (!tail.whole) lines.shift();
  const entries: Record<string, unknown>[] = [];
  for (const line of lines) {
    if (line.trim() === '') continue;
    try {
      const v: unknown = JSON.parse(line);
      if (isObject(v)) entries.push(v);
    } catch {
      // A line being written (the last) or damaged: not counted.
    }
  }
  const start = promptIndex(entries, promptId);
  if (start < 0) return null;
  const byId = new Map<string, RunUsage>();
  for (const e of entries.slice(start + 1)) {
    // The next prompt starts the next run (a Stop read late, after it was typed).
    if (e.type === 'user' && isTypedPrompt(e)) break;
    if (e.type !== 'assistant' || !isObject(e.message)) continue;
    const id = str(e.message.id);
    const usage = usageOf(e.message.usage);
    if (id === undefined || usage === null) continue;
    byId.delete(id);
    byId.set(id, usage);
  }
  if (byId.size === 0) return null;
  const sum: RunUsage = { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  for (const u of byId.values()) {
    sum.input += u.input;
    sum.output += u.output;
    sum.cache_read += u.cache_read;
    sum.cache_write += u.cache_write;
  }
  return sum;
}

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

const count = (v: unknown): number | null =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : v === undefined || v === null ? 0 : null;

/** The four figures of one Anthropic `usage` object; null when it is not one (no input or output count). */
function usageOf(u: unknown): RunUsage | null {
  if (!isObject(u) || typeof u.input_tokens !== 'number' || typeof u.output_tokens !== 'number') return null;
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  const cache_read = count(u.cache_read_input_tokens);
  const cache_write = count(u.cache_creation_input_tokens);
  if (input === null || output === null || cache_read === null || cache_write === null) return null;
  return { input, output, cache_read, cache_write };
}
