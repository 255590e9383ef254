import { describe, expect, it } from 'vitest';
import { headFields, oversizeFields, tailFields } from './oversize.ts';

describe('the identifying fields of a payload over the limit', () => {
  const whole = JSON.stringify({
    session_id: 's "1"',
    cwd: '/w\\',
    n: 3,
    tool_input: { content: '"tool_use_id": "fake", }', list: [1, '"}'] },
    tool_response: 'x',
    tool_use_id: 'toolu_1',
    flag: true,
  });

  it('reads the top-level strings of a whole object forwards and backwards alike, escapes included', () => {
    const all = { session_id: 's "1"', cwd: '/w\\', tool_response: 'x', tool_use_id: 'toolu_1' };
    expect(headFields(whole)).toEqual(all);
    expect(tailFields(whole)).toEqual({ tool_use_id: 'toolu_1', tool_response: 'x' });
  });

  it('takes nothing from inside a nested value cut off by the bounds, only the whole fields around it', () => {
    const cut = whole.indexOf('fake') + 2;
    expect(headFields(whole.slice(0, cut))).toEqual({ session_id: 's "1"', cwd: '/w\\' });
    const from = whole.indexOf('list');
    expect(tailFields(whole.slice(from))).toEqual({ tool_use_id: 'toolu_1', tool_response: 'x' });
    // A field whose key is cut off at the start of the tail is not taken.
    expect(tailFields(whole.slice(whole.indexOf('use_id": "toolu_1')))).toEqual({});
  });

  it('keeps the last of duplicate keys, as a JSON parser does; without the end only the start is read', () => {
    const dup = '{"tool_use_id":"a","x":{"y":1},"tool_use_id":"b","tool_use_id":"c"}';
    const buf = Buffer.from(dup);
    expect(oversizeFields(buf, buf, true)).toEqual({ tool_use_id: 'c' });
    expect(oversizeFields(buf.subarray(0, 40), buf, false)).toEqual({ tool_use_id: 'a' });
  });

  it('reads nothing from what is not an object', () => {
    expect(headFields('["a"]')).toEqual({});
    expect(tailFields('"a"')).toEqual({});
  });
});
