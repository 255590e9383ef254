import { describe, expect, it } from 'vitest';
import { changeOwnerLabel } from './change-owner.ts';

describe('change block owner label', () => {
  it('names the run, with its source when it is not a plain run, and cuts generated ids', () => {
    const uuid = '0b6f1c2d-1111-4222-8333-444455556666';
    expect(changeOwnerLabel({ source: 'run', run_id: uuid, tool_call_id: null })).toEqual({
      text: 'Run 0b6f1c2d',
      title: `run ${uuid}`,
    });
    expect(changeOwnerLabel({ source: 'coding-agent', run_id: 'r1', tool_call_id: null }).text).toBe(
      'Run r1 (coding-agent)',
    );
  });

  it("quotes an agent run's prompt after its short id: its first line, cut to 60 characters", () => {
    const uuid = 'b82ae6b0-1111-4222-8333-444455556666';
    expect(changeOwnerLabel({ source: 'coding-agent', run_id: uuid, tool_call_id: null }, null, 'Fix it')).toEqual({
      text: 'Run b82ae6b0 (coding-agent) · Fix it',
      title: `run ${uuid}: Fix it`,
    });
    const long = `sh -c '${'x'.repeat(80)}'\nsecond line`;
    const text = changeOwnerLabel({ source: 'coding-agent', run_id: 'r1', tool_call_id: null }, null, long).text;
    expect(text).toBe(`Run r1 (coding-agent) · sh -c '${'x'.repeat(52)}…`);
    // A blank prompt names the run alone; a tool call's label does not take the run's prompt.
    expect(changeOwnerLabel({ source: 'coding-agent', run_id: 'r1', tool_call_id: null }, null, '  ')).toEqual({
      text: 'Run r1 (coding-agent)',
      title: 'run r1',
    });
    expect(changeOwnerLabel({ source: 'tool', run_id: 'r1', tool_call_id: 't1' }, 'edit', 'npm test').text).toBe(
      'Tool call edit · t1 in run r1',
    );
  });

  it("names a wrapped command's run by its id alone: the command line is shown once, above the run", () => {
    const uuid = 'b82ae6b0-1111-4222-8333-444455556666';
    expect(changeOwnerLabel({ source: 'run', run_id: uuid, tool_call_id: null }, null, 'npm test')).toEqual({
      text: 'Run b82ae6b0',
      title: `run ${uuid}: npm test`,
    });
  });

  it('names the tool call, its tool when known, and its run', () => {
    expect(changeOwnerLabel({ source: 'tool', run_id: 'r1', tool_call_id: 't1' }, 'edit_file')).toEqual({
      text: 'Tool call edit_file · t1 in run r1',
      title: 'tool call t1 of run r1',
    });
    expect(changeOwnerLabel({ source: 'tool', run_id: 'r1', tool_call_id: 't1' }).text).toBe('Tool call t1 in run r1');
  });
});
