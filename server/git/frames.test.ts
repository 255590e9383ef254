import { describe, expect, it } from 'vitest';
import { createDecoder, encodeFrame, encodeJsonFrame, encodeU32Frame, EXIT, STDIN_ACK, STDOUT } from './frames.js';

type Got = [type: number, id: number, payload: string];

function frames(): Buffer[] {
  return [
    encodeFrame(STDOUT, 7, Buffer.from('hello\0world')),
    encodeFrame(STDOUT, 0xffff_fffe, undefined),
    encodeU32Frame(STDIN_ACK, 3, 262_144),
    encodeJsonFrame(EXIT, 7, { code: 0, signal: null, stdoutTruncated: false }),
  ];
}

const expected: Got[] = [
  [STDOUT, 7, Buffer.from('hello\0world').toString('hex')],
  [STDOUT, 0xffff_fffe, ''],
  [STDIN_ACK, 3, '00040000'],
  [EXIT, 7, Buffer.from('{"code":0,"signal":null,"stdoutTruncated":false}').toString('hex')],
];

describe('helper framing', () => {
  it('decodes the same frames whether they arrive whole, together or one byte at a time', () => {
    const all = Buffer.concat(frames());
    for (const split of [all.length, 1, 2, 5, 9, 10, 13]) {
      const got: Got[] = [];
      const push = createDecoder((type, id, payload) => got.push([type, id, payload.toString('hex')]));
      for (let at = 0; at < all.length; at += split) push(all.subarray(at, at + split));
      expect(got, `chunks of ${split} bytes`).toEqual(expected);
    }
  });

  it('refuses a frame longer than its bound instead of buffering it', () => {
    const push = createDecoder(() => undefined, 16);
    expect(() => push(encodeFrame(STDOUT, 1, Buffer.alloc(17)))).toThrow(/exceeds 16/);
    // Positive control: at the bound it is accepted.
    let seen = 0;
    createDecoder((_t, _i, p) => (seen = p.length), 16)(encodeFrame(STDOUT, 1, Buffer.alloc(16)));
    expect(seen).toBe(16);
  });
});
