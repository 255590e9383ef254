import zlib from 'node:zlib';

/**
 * One gzip stream from pieces compressed separately, so a document made of cached parts is
 * compressed by compressing only its new parts. Each piece is raw deflate ending in a sync flush
 * (byte aligned, no final block); the pieces are valid back to back, then an empty final block,
 * the CRC-32 of all the bytes and their length (RFC 1951/1952; the technique pigz uses). The CRC of
 * the whole is combined from each piece's own CRC, so a cached piece is not read again either.
 */

const HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff]);
const FINAL_EMPTY_BLOCK = Buffer.from([0x03, 0x00]);

/** Raw deflate of one piece, ending byte aligned and not final. */
export function deflatePiece(raw: Buffer): Buffer {
  return zlib.deflateRawSync(raw, { level: 1, finishFlush: zlib.constants.Z_SYNC_FLUSH });
}

// CRC-32 arithmetic: polynomials over GF(2) modulo the CRC-32 polynomial, bit-reflected as zlib
// keeps them (bit 31 is x^0). Appending n bytes to a message multiplies its CRC by x^(8n).
const POLY = 0xedb88320;
const ONE = 0x80000000;

/** a(x) * b(x) mod P. */
function multiply(a: number, b: number): number {
  let product = 0;
  for (let bit = ONE; bit !== 0 && a !== 0; bit >>>= 1) {
    if (a & bit) {
      product ^= b;
      a ^= bit;
    }
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return product >>> 0;
}

/** x^(2^k) mod P for k = 0..31; x's order modulo P is 2^32 - 1, so k = 32 is k = 0 again. */
const X_POW_2K: number[] = [ONE >>> 1];
for (let k = 1; k < 32; k++) X_POW_2K.push(multiply(X_POW_2K[k - 1]!, X_POW_2K[k - 1]!));

/** x^(8n) mod P: what a CRC is multiplied by when n bytes follow. */
export function crcShift(n: number): number {
  let p = ONE;
  for (let k = 3; n > 0; n = Math.floor(n / 2), k++) if (n % 2) p = multiply(X_POW_2K[k % 32]!, p);
  return p;
}

/** The CRC-32 of A followed by B from crc(A), crc(B) and `crcShift(length of B)`. */
export function combineCrc(crcA: number, crcB: number, shiftB: number): number {
  return (multiply(shiftB, crcA) ^ crcB) >>> 0;
}

/** What the join needs of one piece; a cache returns the same answers for the same Buffer. */
export interface PieceCodec {
  deflate(raw: Buffer): Buffer;
  /** The piece's CRC-32 and `crcShift` of its length. */
  check(raw: Buffer): { crc: number; shift: number };
}

export const uncachedPieces: PieceCodec = {
  deflate: deflatePiece,
  check: (raw) => ({ crc: zlib.crc32(raw), shift: crcShift(raw.length) }),
};

/** The gzip stream of `raws` concatenated, each piece's deflate and CRC from `pieces` (which may cache them). */
export function joinGzip(raws: readonly Buffer[], pieces: PieceCodec = uncachedPieces): Buffer {
  let crc = 0;
  let length = 0;
  const out: Buffer[] = [HEADER];
  for (const raw of raws) {
    const c = pieces.check(raw);
    crc = combineCrc(crc, c.crc, c.shift);
    length += raw.length;
    out.push(pieces.deflate(raw));
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(length >>> 0, 4);
  out.push(FINAL_EMPTY_BLOCK, trailer);
  return Buffer.concat(out);
}
