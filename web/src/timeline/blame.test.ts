import { describe, expect, it } from 'vitest';
import type { BlameOrigin } from '../../../shared/index.ts';
import { blameLabel, blameMeta } from './blame.ts';

const origin = (o: Partial<BlameOrigin>): BlameOrigin => ({
  kind: 'run',
  run_id: 'cc3e822d-1111',
  tool_call_id: null,
  change_id: 'run:cc3e822d-1111',
  run_title: null,
  prompt: null,
  agent: 'claude-code',
  tool_name: null,
  at: 0,
  from: null,
  to: null,
  ...o,
});

describe('blame labels', () => {
  it('names a run by its title, else its prompt on one line, else its short id', () => {
    expect(blameLabel(origin({ run_title: 'Fix the parser' }))).toBe('Fix the parser');
    expect(blameLabel(origin({ prompt: 'please\n  fix it' }))).toBe('please fix it');
    expect(blameLabel(origin({}))).toBe('cc3e822d');
    expect(blameLabel(origin({ run_title: 'x'.repeat(60) }))).toHaveLength(40);
  });

  it('says where the chain breaks instead of naming a run', () => {
    expect(blameLabel(origin({ kind: 'outside', run_title: 'Next' }))).toBe('changed outside rundiff');
    expect(blameLabel(origin({ kind: 'before_runs' }))).toBe('before any recorded run');
    expect(blameLabel(origin({ kind: 'not_kept' }))).toBe('contents not kept');
  });

  it('shows the agent, the tool and how long ago', () => {
    const now = 10 * 60_000;
    expect(blameMeta(origin({ kind: 'tool_call', tool_name: 'Edit', at: now - 5 * 60_000 }), now)).toBe(
      'claude-code · Edit · 5 min ago',
    );
    expect(blameMeta(origin({ kind: 'outside', to: now }), now)).toBe('before just now');
    expect(blameMeta(origin({ kind: 'before_runs', agent: null, at: null }), now)).toBe('');
  });
});
