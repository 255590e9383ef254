import { describe, expect, it } from 'vitest';
import type { BridgeEvent } from '../../../shared/index.ts';
import { parseBridgeEvent } from '../../runs/index.ts';
import { replay } from '../fixtures/mapping-replay.ts';
import type { AgentMapper } from '../types.ts';
import { claudeCodeMapper } from './claude-code.ts';
import { geminiMapper } from './gemini.ts';
import { bounded, MESSAGE_BOUND, TRUNCATED } from './kit.ts';

const W = '/work/space';

/** The user message of one prompt, as an agent's hook reports it. */
function promptMessage(mapper: AgentMapper, prompt: string): string {
  const payload =
    mapper === claudeCodeMapper
      ? { session_id: 's', cwd: W, hook_event_name: 'UserPromptSubmit', prompt_id: 'p1', prompt }
      : { session_id: 's', cwd: W, hook_event_name: 'BeforeAgent', timestamp: 't', prompt };
  const { events } = replay(mapper, [payload]);
  const message = events.find((e): e is Extract<BridgeEvent, { type: 'message' }> => e.type === 'message');
  expect(message).toBeDefined();
  // What the mapping sends, the bridge takes.
  expect(() => parseBridgeEvent(message)).not.toThrow();
  return message!.content;
}

describe('one text bound for every agent', () => {
  it('cuts a prompt over the bridge’s 1 MiB on a character boundary, with the same marker for Claude Code and Gemini', () => {
    const prompt = 'é'.repeat(600_000); // 1.2 MB of UTF-8
    const claude = promptMessage(claudeCodeMapper, prompt);
    const gemini = promptMessage(geminiMapper, prompt);
    expect(claude).toBe(gemini);
    expect(claude.endsWith(TRUNCATED)).toBe(true);
    expect(Buffer.byteLength(claude, 'utf8')).toBeLessThanOrEqual(1024 * 1024);
    expect(Buffer.byteLength(claude, 'utf8')).toBeGreaterThan(1024 * 1024 - 4 - Buffer.byteLength(TRUNCATED));
    expect(claude.slice(0, -TRUNCATED.length)).toBe('é'.repeat(claude.length - TRUNCATED.length));
  });

  it('keeps whole a prompt the bridge takes, for Claude Code and Gemini alike', () => {
    const prompt = 'x'.repeat(300 * 1024); // over 256 Ki characters, under 1 MiB
    expect(promptMessage(claudeCodeMapper, prompt)).toBe(prompt);
    expect(promptMessage(geminiMapper, prompt)).toBe(prompt);
  });

  it('counts characters (code points) for names and never splits a surrogate pair', () => {
    const name = bounded('😀'.repeat(300), { chars: 200 });
    expect([...name].length).toBe(200);
    expect(name.endsWith(TRUNCATED)).toBe(true);
    expect(bounded('😀'.repeat(200), { chars: 200 })).toBe('😀'.repeat(200));
    const text = bounded('😀'.repeat(300_000), MESSAGE_BOUND);
    expect(text.slice(0, -TRUNCATED.length)).toBe('😀'.repeat((text.length - TRUNCATED.length) / 2));
  });
});
