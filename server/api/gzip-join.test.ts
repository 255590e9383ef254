import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { combineCrc, crcShift, deflatePiece, joinGzip, uncachedPieces } from './gzip-join.ts';

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

  it('uses the given piece codec (a cache) once per piece for its deflate and its CRC', () => {
    const deflated: Buffer[] = [];
    const checked: Buffer[] = [];
    const piece = Buffer.from('same');
    const z = joinGzip([piece, piece], {
      deflate: (raw) => (deflated.push(raw), deflatePiece(raw)),
      check: (raw) => (checked.push(raw), uncachedPieces.check(raw)),
    });
    expect(deflated).toHaveLength(2);
    expect(checked).toHaveLength(2);
    expect(zlib.gunzipSync(z).toString()).toBe('samesame');
  });

  it("a wrong piece CRC makes the stream fail its check (the trailer's CRC is the one combined)", () => {
    const parts = [Buffer.from('one'), Buffer.from('two')];
    const z = joinGzip(parts, { ...uncachedPieces, check: (raw) => ({ ...uncachedPieces.check(raw), crc: 1 }) });
    expect(() => zlib.gunzipSync(z)).toThrow(/check|header/i);
  });
});

describe('CRC-32 combination', () => {
  it('equals the CRC of the concatenation for any split, empty pieces and long ones included', () => {
    let seed = 7;
    const rand = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    for (const lengths of [
      [0, 0],
      [0, 5],
      [5, 0],
      [1, 1],
      [3, 70_000, 0, 1],
      [65_536, 131_073, 17],
      [1_000_001, 2],
    ]) {
      const parts = lengths.map((n) => Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256))));
      let crc = 0;
      for (const p of parts) crc = combineCrc(crc, zlib.crc32(p), crcShift(p.length));
      expect(crc).toBe(zlib.crc32(Buffer.concat(parts)));
    }
  });
});
