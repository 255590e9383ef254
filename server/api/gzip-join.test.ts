import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { deflatePiece, joinGzip } from './gzip-join.ts';

describe('joinGzip', () => {
  it('pieces compressed separately make one gzip stream that decodes to their concatenation', () => {
    const parts = ['{"a":', '', 'x'.repeat(100_000), ',', 'é ü 😀 '.repeat(5_000), '}'].map((s) => Buffer.from(s));
    const z = joinGzip(parts);
    expect(zlib.gunzipSync(z).equals(Buffer.concat(parts))).toBe(true);
    expect(z.length).toBeLessThan(Buffer.concat(parts).length / 10);
  });

  it('an empty document is a valid gzip stream', () => {
    expect(zlib.gunzipSync(joinGzip([])).length).toBe(0);
  });

  it('uses the given piece compressor (a cache) once per piece', () => {
    const calls: Buffer[] = [];
    const piece = Buffer.from('same');
    const z = joinGzip([piece, piece], (raw) => (calls.push(raw), deflatePiece(raw)));
    expect(calls).toHaveLength(2);
    expect(zlib.gunzipSync(z).toString()).toBe('samesame');
  });
});
