/**
 * The payloads Claude Code 2.1.328 really sent in a two-prompt session (recorded by
 * claude-code-payloads.e2e.test.ts, kept in fixtures/claude-code/), replayed through the mapping in
 * the order they came: SessionStart reaches command hooks only, SessionEnd follows every prompt's
 * Stop, a failed shell command comes as PostToolUseFailure.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { claudeCodeMapper } from './agents/claude-code.ts';
import { initialHookState } from './types.ts';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/claude-code');
const load = (name: string) => JSON.parse(fs.readFileSync(path.join(dir, `${name}.json`), 'utf8')) as unknown;

/** One prompt's payloads as the CLI sent them. */
const PROMPT_ONE = [
  'user-prompt-submit-1',
  'pre-tool-use-write',
  'post-tool-use-write',
  'pre-tool-use-read',
  'post-tool-use-read',
  'pre-tool-use-edit',
  'post-tool-use-edit',
  'stop-1',
  'session-end-1',
];
const PROMPT_TWO = [
  'user-prompt-submit-2',
  'pre-tool-use-bash-sed',
  'post-tool-use-bash-sed',
  'pre-tool-use-bash-false',
  'post-tool-use-failure-bash-false',
  'stop-2',
  'session-end-2',
];

/** Maps the named payloads in order; returns each payload's events as `type[:detail]` strings. */
function replay(names: string[]): string[][] {
  let state = initialHookState();
  return names.map((name) => {
    const out = claudeCodeMapper.map(load(name), state);
    state = out.state;
    return out.events.map((e) => {
      if (e.type === 'tool.started' || e.type === 'tool.completed') return `${e.type}:${e.tool_call_id}`;
      if (e.type === 'run.started' || e.type === 'run.completed') return `${e.type}:${e.run_id}`;
      return e.type;
    });
  });
}

describe('Claude Code 2.1.328 recorded payloads', () => {
  it('map to one run per prompt, a block per editing tool (none for the read), a failed block for the failed command', () => {
    const p1 = load('user-prompt-submit-1') as { prompt_id: string };
    const p2 = load('user-prompt-submit-2') as { prompt_id: string };
    const events = replay(['session-start-startup', ...PROMPT_ONE, 'session-start-resume', ...PROMPT_TWO]);
    const flat = events.flat();
    expect(flat.filter((e) => e === 'session.upsert').length).toBeGreaterThanOrEqual(1);
    expect(flat.filter((e) => e.startsWith('run.') || e.startsWith('tool.'))).toEqual([
      `run.started:${p1.prompt_id}`,
      'tool.started:toolu_scripted_1',
      'tool.completed:toolu_scripted_1',
      'tool.started:toolu_scripted_3',
      'tool.completed:toolu_scripted_3',
      `run.completed:${p1.prompt_id}`,
      `run.started:${p2.prompt_id}`,
      'tool.started:toolu_scripted_5',
      'tool.completed:toolu_scripted_5',
      'tool.started:toolu_scripted_6',
      'tool.completed:toolu_scripted_6',
      `run.completed:${p2.prompt_id}`,
    ]);
    // The SessionEnd after each Stop finds no open run: it fails nothing.
    expect(flat).not.toContain('run.failed');
  });

  it('carries the error of the failed command into its block', () => {
    let state = initialHookState();
    let last: unknown[] = [];
    for (const name of [...PROMPT_ONE, ...PROMPT_TWO.slice(0, 5)]) {
      const out = claudeCodeMapper.map(load(name), state);
      state = out.state;
      last = out.events;
    }
    expect(JSON.stringify(last)).toContain('Exit code 1');
  });

  it('a session whose first payload is a prompt (http hooks never see SessionStart) is still created first', () => {
    const events = replay(PROMPT_ONE);
    expect(events[0]![0]).toBe('session.upsert');
  });
});
