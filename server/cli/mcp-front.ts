import { PassThrough, Writable } from 'node:stream';
import type { Readable } from 'node:stream';

/**
 * The first moments of `rundiff mcp`: a client waits for its `initialize` answer before it does
 * anything else, and loading the MCP SDK, the git tools and the store takes most of a second on a
 * busy machine. The front owns stdio from the start, answers a well-formed `initialize` at once,
 * and passes everything (that `initialize` included) on, unchanged and in order, to the SDK's own
 * stdio transport once the rest has loaded. The SDK's answer to that `initialize` is dropped: the
 * client has its answer already, the same one (a test holds the two equal), and the SDK still sees
 * the request, so it knows the client's name and capabilities.
 */

/**
 * The protocol versions the SDK speaks, newest first, as in its `SUPPORTED_PROTOCOL_VERSIONS`
 * (a test holds the two equal: importing the SDK's list would load the SDK this front exists to defer).
 */
export const PROTOCOL_VERSIONS: readonly string[] = [
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
];

/** What the server says of itself in its `initialize` answer (and gives the SDK's Server). */
export interface ServerIdentity {
  info: { name: string; version: string };
  capabilities: Record<string, unknown>;
  instructions: string;
}

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The answer to a message when it is a well-formed `initialize` request, as the SDK's Server would
 * give it: the client's protocol version when supported, else the newest. Anything else (a
 * notification, another method, params the SDK would refuse) is null and left to the SDK.
 */
export function initializeAnswer(message: unknown, identity: ServerIdentity): JsonObject | null {
  if (!isObject(message) || message.jsonrpc !== '2.0' || message.method !== 'initialize') return null;
  const { id, params } = message;
  if ((typeof id !== 'string' && (typeof id !== 'number' || !Number.isInteger(id))) || !isObject(params)) return null;
  const { protocolVersion, capabilities, clientInfo } = params;
  if (typeof protocolVersion !== 'string' || !isObject(capabilities) || !isObject(clientInfo)) return null;
  if (typeof clientInfo.name !== 'string' || typeof clientInfo.version !== 'string') return null;
  return {
    jsonrpc: '2.0',
    id,
    result: {
      protocolVersion: PROTOCOL_VERSIONS.includes(protocolVersion) ? protocolVersion : PROTOCOL_VERSIONS[0],
      capabilities: identity.capabilities,
      serverInfo: identity.info,
      instructions: identity.instructions,
    },
  };
}

/** The first line of a stream's text, once it has arrived; at most this many bytes are looked at. */
const FIRST_LINE_LIMIT = 64 * 1024;

export interface StdioFront {
  /** What the SDK's stdio transport reads: every byte from stdin, in order. */
  input: Readable;
  /** What it writes to: stdout, less its answer to the `initialize` the front answered. */
  output: Writable;
  /** The early answer, once given (for tests and logs). */
  answered(): JsonObject | null;
  /** Stops reading stdin, so that nothing keeps the process alive once the server is done. */
  close(): void;
}

/** Starts reading `stdin` now and answers an `initialize` sent first; see the module comment. */
export function startStdioFront(
  identity: ServerIdentity,
  stdin: Readable = process.stdin,
  stdout: NodeJS.WritableStream = process.stdout,
): StdioFront {
  const input = new PassThrough();
  let head: Buffer | null = Buffer.alloc(0); // the bytes before the first newline, until it comes
  let early: JsonObject | null = null;
  let dropPending = false;

  const onData = (chunk: Buffer) => {
    if (head !== null) {
      const newline = chunk.indexOf(0x0a);
      if (newline === -1) {
        head = head.length + chunk.length > FIRST_LINE_LIMIT ? null : Buffer.concat([head, chunk]);
      } else {
        const line = Buffer.concat([head, chunk.subarray(0, newline)])
          .toString('utf8')
          .replace(/\r$/, '');
        head = null;
        let message: unknown;
        try {
          message = JSON.parse(line);
        } catch {
          message = null; // the SDK's transport reports it
        }
        early = initializeAnswer(message, identity);
        if (early) {
          dropPending = true;
          stdout.write(`${JSON.stringify(early)}\n`);
        }
      }
    }
    input.write(chunk);
  };
  const onEnd = () => input.end();
  stdin.on('data', onData);
  stdin.on('end', onEnd);

  const output = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      if (dropPending && early) {
        // The SDK writes one whole frame per write; its first answer to the early-answered id is dropped.
        try {
          const frame = JSON.parse(chunk.toString('utf8')) as JsonObject;
          if (frame.id === early.id && ('result' in frame || 'error' in frame)) {
            dropPending = false;
            callback();
            return;
          }
        } catch {
          // not one frame: passed on as it is
        }
      }
      stdout.write(chunk, (err) => callback(err ?? null));
    },
  });

  return {
    input,
    output,
    answered: () => early,
    close() {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.pause();
    },
  };
}
