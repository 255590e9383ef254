import { describe, expect, it } from 'vitest';
import { readFixture } from '../fixtures/mapping-replay.ts';
import { initialHookState, type HookAgent } from '../types.ts';
import { MAPPERS } from './index.ts';

/**
 * The server learns a payload's agent session from a mapping run on an empty state, and only then
 * runs the mapping with that session's state. So a payload whose meaning depends on the state
 * (an edit or a reply inside a prompt) must still name its session when no prompt is known.
 */
const AGENTS: HookAgent[] = ['gemini', 'cursor', 'copilot', 'opencode', 'cline', 'hermes'];

describe('hook mappings name the session of every payload without knowing its state', () => {
  for (const agent of AGENTS)
    it(`${agent}: every payload of the fixture sequence names its session on an empty state`, () => {
      const mapper = MAPPERS[agent]!;
      const payloads = readFixture(agent, 'sequence');
      const unnamed = payloads.filter((p) => mapper.map(p, initialHookState()).sessionId === null);
      expect(unnamed).toEqual([]);
    });

  it('every agent has a mapping that says which version it was checked against', () => {
    for (const agent of AGENTS) {
      expect(MAPPERS[agent]?.agent).toBe(agent);
      expect(MAPPERS[agent]?.checkedVersion).toMatch(/\S/);
    }
  });
});
