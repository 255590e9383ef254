import zlib from 'node:zlib';

/**
 * One gzip stream from pieces compressed separately, so a document made of cached parts is
 * compressed by compressing only its new parts. Each piece is raw deflate ending in a sync flush
 * (byte aligned, no final block); the pieces are valid back to back, then an empty final block,
 * the CRC-32 of all the bytes and their length (RFC 1951/1952; the technique pigz uses).
 */

const HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff]);
const FINAL_EMPTY_BLOCK = Buffer.from([0x03, 0x00]);

/** Raw deflate of one piece, ending byte aligned and not final. */
export function deflatePiece(raw: Buffer): Buffer {
  return zlib.deflateRawSync(raw, { level: 1, finishFlush: zlib.constants.Z_SYNC_FLUSH });
}

/** The gzip stream of `raws` concatenated; `deflated(raw)` returns (and may cache) each piece's deflate. */
export function joinGzip(raws: readonly Buffer[], deflated: (raw: Buffer) => Buffer = deflatePiece): Buffer {
  let crc = 0;
  let length = 0;
  const out: Buffer[] = [HEADER];
  for (const raw of raws) {
    crc = zlib.crc32(raw, crc);
    length += raw.length;
    out.push(deflated(raw));
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(length >>> 0, 4);
  out.push(FINAL_EMPTY_BLOCK, trailer);
  return Buffer.concat(out);
}
