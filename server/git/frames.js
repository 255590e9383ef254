// The framing between the server and its git helper process (see README.md in this folder): every
// message is a 9-byte header (type: u8, call id: u32 BE, payload length: u32 BE) and the payload.
// Plain JS with no imports so the helper loads nothing of the server; the server imports it too
// (types in frames.d.ts), so both sides share one encoder and one decoder.

export const HEADER_BYTES = 9;

/** Server -> helper. */
export const SPAWN = 1; // JSON {file, args, cwd, env, maxStdoutBytes}
export const STDIN = 2; // raw bytes for the call's stdin
export const STDIN_END = 3; // close the call's stdin
export const KILL = 4; // kill the call's process group

/** Helper -> server. */
export const READY = 0x81; // id 0, empty: the helper reads requests from now on
export const SPAWNED = 0x82; // u32 BE process id of git (its process group)
export const STDOUT = 0x83; // raw bytes of git's stdout
export const STDIN_ACK = 0x84; // u32 BE: this many stdin bytes were handed to git
export const STDERR = 0x85; // raw bytes: the bounded tail of git's stderr, once, before EXIT
export const EXIT = 0x86; // JSON {code, signal, stdoutTruncated}
export const SPAWN_ERROR = 0x87; // JSON {code, message, sync}
export const KILLED = 0x88; // empty: a KILL was acted on (the helper is responsive)

/** One frame as the bytes to write: header and payload in one buffer (payloads here are small or one chunk). */
export function encodeFrame(type, id, payload) {
  const body = payload ?? EMPTY;
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  frame.writeUInt8(type, 0);
  frame.writeUInt32BE(id, 1);
  frame.writeUInt32BE(body.length, 5);
  body.copy(frame, HEADER_BYTES);
  return frame;
}

export function encodeJsonFrame(type, id, value) {
  return encodeFrame(type, id, Buffer.from(JSON.stringify(value), 'utf8'));
}

export function encodeU32Frame(type, id, n) {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return encodeFrame(type, id, b);
}

const EMPTY = Buffer.alloc(0);

/**
 * A streaming decoder. `onFrame(type, id, payload)` gets each frame whole; a payload that arrived
 * in one chunk is a view of that chunk (no copy), one split across chunks is joined once. Payloads
 * above `maxPayloadBytes` are a protocol error (the peer is not speaking this framing).
 */
export function createDecoder(onFrame, maxPayloadBytes = 16 * 1024 * 1024) {
  let header = Buffer.alloc(0);
  let type = 0;
  let id = 0;
  let want = -1; // payload bytes still missing; -1 while reading a header
  let parts = [];
  let have = 0;

  return function push(chunk) {
    let at = 0;
    while (at < chunk.length) {
      if (want < 0) {
        const need = HEADER_BYTES - header.length;
        const take = Math.min(need, chunk.length - at);
        header =
          header.length === 0 && take === HEADER_BYTES
            ? chunk.subarray(at, at + take)
            : Buffer.concat([header, chunk.subarray(at, at + take)]);
        at += take;
        if (header.length < HEADER_BYTES) return;
        type = header.readUInt8(0);
        id = header.readUInt32BE(1);
        want = header.readUInt32BE(5);
        header = Buffer.alloc(0);
        if (want > maxPayloadBytes) throw new Error(`frame of ${want} bytes exceeds ${maxPayloadBytes}`);
        parts = [];
        have = 0;
        if (want === 0) {
          want = -1;
          onFrame(type, id, EMPTY);
        }
        continue;
      }
      const take = Math.min(want - have, chunk.length - at);
      parts.push(chunk.subarray(at, at + take));
      have += take;
      at += take;
      if (have === want) {
        const payload = parts.length === 1 ? parts[0] : Buffer.concat(parts, have);
        want = -1;
        parts = [];
        have = 0;
        onFrame(type, id, payload);
      }
    }
  };
}
