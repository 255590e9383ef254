import { describe, expect, it } from 'vitest';
import type { Message, Run } from '../../../shared/index.ts';
import { isCommandOutcome, runMarkerLabel } from './command-outcome.ts';

const run = (extra: Partial<Run> = {}): Run => ({
  run_id: 'r',
  session_id: 's',
  title: null,
  status: 'failed',
  source: 'run',
  workspace: '/w',
  started_at: 1_000,
  finished_at: 2_600,
  error: 'exit 1 in 0.5 s',
  change_id: 'run:r',
  tracking: true,
  reason: null,
  usage: null,
  ...extra,
});
const reply = (content: string): Message => ({
  id: 'm',
  session_id: 's',
  role: 'assistant',
  content,
  run_id: 'r',
  tool_call_id: null,
  created_at: 1_600,
});

describe("a wrapped command's outcome", () => {
  it('a failed command reads with one label and one duration', () => {
    expect(runMarkerLabel(run())).toBe('Run failed');
    expect(isCommandOutcome(reply('exit 1 in 0.5 s'), run())).toBe(true);
    // Positive control: an error without its own duration keeps the run's.
    expect(runMarkerLabel(run({ error: 'the model gave up' }))).toBe('Run failed in 1.6 s');
    expect(runMarkerLabel(run({ status: 'completed', error: null }))).toBe('Run completed in 1.6 s');
  });

  it('a fast command (its duration in ms) and a long one (in minutes) are folded the same way', () => {
    for (const took of ['12 ms', '59.9 s', '3 min', '3 min 5 s', '2 h 5 min']) {
      const error = `exit 3 in ${took}`;
      expect(runMarkerLabel(run({ error })), took).toBe('Run failed');
      expect(isCommandOutcome(reply(error), run({ error })), took).toBe(true);
    }
    expect(isCommandOutcome(reply('killed by SIGTERM after 40 ms'), run({ error: 'x' }))).toBe(true);
  });

  it('only the outcome reply of a wrapped command is folded into the marker', () => {
    expect(isCommandOutcome(reply('exit 0 in 4.2 s'), run({ status: 'completed', error: null }))).toBe(true);
    expect(
      isCommandOutcome(reply('killed by SIGTERM after 1.0 s'), run({ error: 'killed by SIGTERM after 1.0 s' })),
    ).toBe(true);
    expect(isCommandOutcome(reply('nope: command not found'), run({ error: 'nope: command not found' }))).toBe(true);
    expect(isCommandOutcome(reply('exit 1 in 0.5 s'), run({ source: 'coding-agent' }))).toBe(false);
    expect(isCommandOutcome(reply('I fixed the parser'), run())).toBe(false);
    expect(isCommandOutcome({ ...reply('exit 1 in 0.5 s'), role: 'user' }, run())).toBe(false);
    expect(isCommandOutcome(reply('exit 1 in 0.5 s'), undefined)).toBe(false);
  });
});
