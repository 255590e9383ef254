/**
 * Each agent's usage reader on a log recorded from its real CLI (two prompts of one session against
 * the scripted model, whose answers reported the figures asserted here; see the fixtures' README).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { transcriptUsage } from '../transcript.ts';
import { codexUsage } from './codex.ts';
import { geminiUsage } from './gemini.ts';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures');
const CODEX_LOG = path.join(fixtures, 'codex/rollout-two-prompts.jsonl');
const GEMINI_LOG = path.join(fixtures, 'gemini/chat-two-prompts.jsonl');
const CODEX_TURN_1 = '01a23797-b5a2-7e23-95d3-eac07253ce1a';
const CODEX_TURN_2 = '01a23797-baf1-7053-bc35-8355cbd917dd';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function write(text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-transcript-'));
  dirs.push(dir);
  const file = path.join(dir, 'log.jsonl');
  fs.writeFileSync(file, text);
  return file;
}
const lines = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');

describe('Codex session log (0.169.0)', () => {
  it("sums each run's answers by its turn id, cached input apart from the rest", () => {
    // Turn 1: answers of 1200 in (1000 cached) / 30 out and 1300 in (1200 cached) / 12 out.
    expect(transcriptUsage(CODEX_LOG, CODEX_TURN_1, codexUsage)).toEqual({
      input: 300,
      output: 42,
      cache_read: 2200,
      cache_write: 0,
    });
    // Turn 2 (the resumed session): one answer of 1500 in (1280 cached) / 7 out.
    expect(transcriptUsage(CODEX_LOG, CODEX_TURN_2, codexUsage)).toEqual({
      input: 220,
      output: 7,
      cache_read: 1280,
      cache_write: 0,
    });
  });

  it('gives nothing for a turn the log does not hold or no turn id, and counts an answer written twice once', () => {
    expect(transcriptUsage(CODEX_LOG, 'another-turn', codexUsage)).toBeNull();
    expect(transcriptUsage(CODEX_LOG, null, codexUsage)).toBeNull();
    const all = lines(CODEX_LOG);
    const again = all.find((l) => l.includes('"token_usage_record"') && l.includes(CODEX_TURN_2))!;
    const torn = '{"type":"token_usage_record","payload":{"turn_id":"' + CODEX_TURN_2 + '","usage":{"inp';
    const file = write([...all, again].join('\n') + '\n' + torn);
    expect(transcriptUsage(file, CODEX_TURN_2, codexUsage)).toEqual({
      input: 220,
      output: 7,
      cache_read: 1280,
      cache_write: 0,
    });
  });

  it('a record whose cached count exceeds its input is not a usage the reader can split: not counted', () => {
    const bad = {
      type: 'token_usage_record',
      payload: {
        turn_id: 't',
        response_id: 'r',
        usage: { input_tokens: 5, cached_input_tokens: 9, output_tokens: 1 },
      },
    };
    expect(transcriptUsage(write(JSON.stringify(bad) + '\n'), 't', codexUsage)).toBeNull();
  });
});

describe('Gemini CLI chat log (0.61.0)', () => {
  it('the run is what follows the last typed prompt, after a resume rewrote the message list', () => {
    // Prompt 2 (resumed): one answer of 1000 prompt tokens (950 cached), 4 out, 2 thinking.
    expect(transcriptUsage(GEMINI_LOG, 'any', geminiUsage)).toEqual({
      input: 50,
      output: 6,
      cache_read: 950,
      cache_write: 0,
    });
  });

  it('counts each model message once, by its last line, with tool-use prompt and thinking tokens', () => {
    // The log as it stood when the first prompt ended: its answers wrote a message twice (as it
    // arrived, then with its tool call).
    const all = lines(GEMINI_LOG);
    const end = all.findIndex((l) => l.includes('"content":"Done."'));
    const first = write(all.slice(0, end + 1).join('\n') + '\n');
    expect(all.slice(0, end).filter((l) => l.includes('"tokens":{"input":900')).length).toBe(2);
    // 900 in (600 cached, 3 tool-use), 20 out + 5 thinking; then 950 in (900 cached), 9 out.
    expect(transcriptUsage(first, null, geminiUsage)).toEqual({
      input: 353,
      output: 34,
      cache_read: 1500,
      cache_write: 0,
    });
  });

  it('gives nothing when no prompt was typed or its answers report no tokens', () => {
    const noPrompt = { id: 'g', type: 'gemini', tokens: { input: 5, output: 1 } };
    expect(transcriptUsage(write(JSON.stringify(noPrompt) + '\n'), null, geminiUsage)).toBeNull();
    const prompt = { id: 'u', type: 'user', content: [{ text: 'hi' }] };
    const bare = { id: 'g', type: 'gemini', content: 'hello' };
    expect(
      transcriptUsage(write([prompt, bare].map((l) => JSON.stringify(l)).join('\n')), null, geminiUsage),
    ).toBeNull();
  });
});
