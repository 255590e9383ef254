import { describe, expect, it } from 'vitest';
import { createOversizeScanner, OVERSIZE_FIELD_CHARS, OVERSIZE_MAX_FIELDS, oversizeFields } from './oversize.ts';

/** What the scanner reads of `body` when its bytes arrive in chunks of `size` bytes. */
function chunked(body: string, size: number, paths: string[] = []) {
  const scanner = createOversizeScanner(paths);
  const bytes = Buffer.from(body);
  for (let i = 0; i < bytes.length; i += size) scanner.push(bytes.subarray(i, i + size));
  return scanner.fields();
}

const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

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
  const all = { session_id: 's "1"', cwd: '/w\\', n: 3, tool_response: 'x', tool_use_id: 'toolu_1', flag: true };

  it('reads the top-level scalars of a whole object, escapes included, and nothing from inside nested values', () => {
    expect(plain(oversizeFields(whole))).toEqual(all);
  });

  it('reads the same whatever the chunks the bytes arrive in (a chunk may end inside an escape)', () => {
    for (const size of [1, 2, 3, 5, 7, 64]) expect(plain(chunked(whole, size))).toEqual(all);
  });

  it('takes nothing from inside a nested value cut off, only the whole fields before it', () => {
    const cut = whole.indexOf('fake') + 2;
    expect(plain(oversizeFields(whole.slice(0, cut)))).toEqual({ session_id: 's "1"', cwd: '/w\\', n: 3 });
    // A string cut inside is not taken; a number may go on in the next byte, so it waits for its end.
    expect(plain(oversizeFields(whole.slice(0, whole.indexOf('toolu_1') + 3)))).not.toHaveProperty('tool_use_id');
    expect(plain(oversizeFields('{"a":"b","n":12'))).toEqual({ a: 'b' });
  });

  it('keeps the last of duplicate keys, as a JSON parser does; a cut body keeps what came before the cut', () => {
    const dup = '{"tool_use_id":"a","x":{"y":1},"tool_use_id":"b","tool_use_id":"c"}';
    expect(plain(oversizeFields(dup))).toEqual({ tool_use_id: 'c' });
    expect(plain(oversizeFields(dup.slice(0, 40)))).toEqual({ tool_use_id: 'a' });
    // A later duplicate that is not a scalar replaces it too.
    expect(plain(oversizeFields('{"a":"1","a":{"b":"2"}}'))).toEqual({});
  });

  it('reads nothing from what is not an object, and stops at the first byte it cannot place', () => {
    expect(plain(oversizeFields('["a"]'))).toEqual({});
    expect(plain(oversizeFields('"a"'))).toEqual({});
    expect(plain(oversizeFields('{"a":"1" "b":"2"}'))).toEqual({ a: '1' });
    expect(plain(oversizeFields('{"a":"1",}"b":"2"'))).toEqual({ a: '1' });
  });

  it('takes the nested fields it is asked for, at exactly their path, wherever they lie', () => {
    const body = JSON.stringify({
      hook_event_name: 'post_tool_call',
      tool_input: { content: 'x'.repeat(10_000), tool_call_id: 'not this one' },
      session_id: 's1',
      extra: {
        args: { content: 'y'.repeat(10_000) },
        result: 'ok',
        tool_call_id: 'call_1',
        deep: { tool_call_id: 'no' },
      },
    });
    const fields = plain(oversizeFields(body, ['extra.tool_call_id', 'extra.result', 'event.properties.sessionID']));
    expect(fields).toEqual({
      hook_event_name: 'post_tool_call',
      session_id: 's1',
      extra: { result: 'ok', tool_call_id: 'call_1' },
    });
    const nested = JSON.stringify({ event: { type: 'session.idle', properties: { sessionID: 'ses_1', n: 1 } } });
    expect(plain(oversizeFields(nested, ['event.type', 'event.properties.sessionID']))).toEqual({
      event: { type: 'session.idle', properties: { sessionID: 'ses_1' } },
    });
  });

  it('bounds what it keeps: a string over the field bound, a number over 64 bytes, fields past the count', () => {
    const long = 'z'.repeat(OVERSIZE_FIELD_CHARS + 1);
    const body = JSON.stringify({ a: long, b: 'z'.repeat(OVERSIZE_FIELD_CHARS), c: 'end' });
    expect(Object.keys(oversizeFields(body))).toEqual(['b', 'c']);
    expect(plain(oversizeFields(`{"n":${'1'.repeat(65)},"m":${'1'.repeat(64)}}`))).toEqual({
      m: Number('1'.repeat(64)),
    });
    const many = Object.fromEntries(Array.from({ length: OVERSIZE_MAX_FIELDS + 10 }, (_, i) => [`k${i}`, 'v']));
    expect(Object.keys(oversizeFields(JSON.stringify(many)))).toHaveLength(OVERSIZE_MAX_FIELDS);
  });

  it('matches a JSON parser on random objects (top-level scalars and the asked-for nested fields)', () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const text = () =>
      ['', 'a', '"', '\\', '\\"', '}', '{', ',', 'é', '\u2028', '\n', 'ü\\\\'].slice(0, 1 + rand(12)).join('');
    const value = (depth: number): unknown => {
      const k = rand(depth > 2 ? 5 : 7);
      if (k === 0) return text();
      if (k === 1) return rand(1000) - 500;
      if (k === 2) return rand(2) === 0;
      if (k === 3) return null;
      if (k === 4) return 1.5e-7;
      if (k === 5) return Array.from({ length: rand(3) }, () => value(depth + 1));
      return obj(depth + 1);
    };
    const obj = (depth: number): Record<string, unknown> =>
      Object.fromEntries(Array.from({ length: rand(5) }, () => [['id', 'x', 'in', '"q"'][rand(4)]!, value(depth)]));
    for (let round = 0; round < 300; round++) {
      const o = obj(0);
      const body = JSON.stringify(o, null, rand(2) === 0 ? undefined : 2);
      const expected: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(o)) {
        if (v === null || typeof v !== 'object') expected[k] = v;
        else if (k === 'in' && !Array.isArray(v)) {
          const inner = v as Record<string, unknown>;
          expected[k] = 'id' in inner && (inner.id === null || typeof inner.id !== 'object') ? { id: inner.id } : {};
        }
      }
      expect(plain(chunked(body, 1 + rand(9), ['in.id']))).toEqual(expected);
    }
  });
});
