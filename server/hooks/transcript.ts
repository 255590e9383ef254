import path from 'node:path';
import { MAX_RUN_COST_USD, type RunUsage } from '../../shared/index.ts';
import { readRegularFileTail } from '../fs/safe-read.ts';
import { isObject } from './agents/kit.ts';

/**
 * What a run cost, from the agent's own transcript: a file of one JSON object a line that the
 * agent names in its hook payloads (Claude Code's, Codex's and Gemini CLI's `transcript_path`). This
 * module reads such a file within bounds; each agent's `TranscriptUsage` (`transcripts/`) finds the
 * run's lines in it and sums the figures its model's API reported for them.
 *
 * Bounds: the file must be an absolute `.jsonl` path to a regular file (never followed through a
 * final link); only its last `TRANSCRIPT_TAIL_BYTES` are read. A transcript that is gone, not
 * readable, whose run is not within the bytes read, or that names no usage gives no figures
 * (null): never a guess.
 */
export const TRANSCRIPT_TAIL_BYTES = 16 * 1024 * 1024;

/** The transcript's entries (its whole lines that are JSON objects, in order) -> the run's usage, or null. */
export type TranscriptUsage = (entries: Record<string, unknown>[], runId: string | null) => RunUsage | null;

export function transcriptUsage(
  transcriptPath: string,
  runId: string | null,
  usageOf: TranscriptUsage,
  maxBytes = TRANSCRIPT_TAIL_BYTES,
): RunUsage | null {
  const entries = transcriptEntries(transcriptPath, maxBytes);
  return entries === null ? null : usageOf(entries, runId);
}

/** The whole JSON-object lines of the transcript's last `maxBytes`; null when it may not or cannot be read. */
function transcriptEntries(transcriptPath: string, maxBytes: number): Record<string, unknown>[] | null {
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
  return entries;
}

/** A token count as reported: a non-negative integer; absent counts 0; anything else is not a count (null). */
export const tokenCount = (v: unknown): number | null =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : v === undefined || v === null ? 0 : null;

/** The sum of the model calls' figures; null when there are none (a run without usage shows none). */
export function sumUsage(calls: Iterable<RunUsage>): RunUsage | null {
  let sum: RunUsage | null = null;
  let n = 0;
  let priced = 0;
  let cost = 0;
  for (const u of calls) {
    n++;
    sum ??= { input: 0, output: 0, cache_read: 0, cache_write: 0 };
    sum.input += u.input;
    sum.output += u.output;
    sum.cache_read += u.cache_read;
    sum.cache_write += u.cache_write;
    if (typeof u.cost_usd === 'number') {
      priced++;
      cost += u.cost_usd;
    }
  }
  // Money only when every call was priced, and above zero (zero is what an agent without a price says).
  if (sum && priced === n && cost > 0 && cost <= MAX_RUN_COST_USD) sum.cost_usd = cost;
  return sum;
}
