import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { PROTOCOL_VERSIONS, startStdioFront, type ServerIdentity } from './mcp-front.ts';

/**
 * The stdio front of `rundiff mcp` over in-memory streams, with the SDK's real Server and stdio
 * transport behind it where a test needs them.
 */

const IDENTITY: ServerIdentity = {
  info: { name: 'rundiff', version: '9.9.9' },
  capabilities: { tools: {} },
  instructions: 'Tools for tests.',
};

const initialize = (id: number | string, params: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'client', version: '1.2' },
    ...params,
  },
});
const line = (m: object) => `${JSON.stringify(m)}\n`;

/** Collects the JSON frames written to a stream. */
function frames(stream: PassThrough): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let buffered = '';
  stream.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let i;
    while ((i = buffered.indexOf('\n')) !== -1) {
      out.push(JSON.parse(buffered.slice(0, i)) as Record<string, unknown>);
      buffered = buffered.slice(i + 1);
    }
  });
  return out;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** The SDK's Server as `rundiff mcp` builds it (same identity, an empty tool list). */
function sdkServer(): Server {
  const server = new Server(IDENTITY.info, {
    capabilities: IDENTITY.capabilities,
    instructions: IDENTITY.instructions,
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
  return server;
}

/** What the SDK alone (its own stdio transport, no front) answers to these lines. */
async function sdkAlone(lines: string): Promise<Record<string, unknown>[]> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const seen = frames(stdout);
  const server = sdkServer();
  await server.connect(new StdioServerTransport(stdin, stdout));
  stdin.write(lines);
  await settle();
  await server.close();
  return seen;
}

describe('the stdio front of rundiff mcp', () => {
  it('answers initialize with nothing behind it yet, and passes the bytes on untouched', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const seen = frames(stdout);
    const front = startStdioFront(IDENTITY, stdin, stdout);
    const text = line(initialize(1)) + line({ jsonrpc: '2.0', method: 'notifications/initialized' });
    stdin.write(text);
    await settle();
    expect(seen).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        result: {
          protocolVersion: '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'rundiff', version: '9.9.9' },
          instructions: 'Tools for tests.',
        },
      },
    ]);
    expect((front.input.read() as Buffer).toString('utf8')).toBe(text);
    front.close();
  });

  it('gives the same answer as the SDK, whose own answer is dropped; the SDK still learns the client', async () => {
    const lines =
      line(initialize('a')) +
      line({ jsonrpc: '2.0', method: 'notifications/initialized' }) +
      line({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const alone = await sdkAlone(lines);

    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const seen = frames(stdout);
    const front = startStdioFront(IDENTITY, stdin, stdout);
    stdin.write(lines);
    await settle();
    expect(seen).toHaveLength(1); // answered before any SDK is there
    const server = sdkServer();
    await server.connect(new StdioServerTransport(front.input, front.output));
    await settle();
    expect(seen).toEqual(alone); // one initialize answer, identical, then tools/list
    expect(seen.map((f) => f.id)).toEqual(['a', 2]);
    expect(server.getClientVersion()).toEqual({ name: 'client', version: '1.2' });
    await server.close();
    front.close();
  });

  it('speaks the SDK protocol versions: a supported one is kept, an unknown one gets the newest', async () => {
    expect(PROTOCOL_VERSIONS).toEqual(SUPPORTED_PROTOCOL_VERSIONS);
    expect(PROTOCOL_VERSIONS[0]).toBe(LATEST_PROTOCOL_VERSION);
    for (const [asked, expected] of [
      ['2024-11-05', '2024-11-05'],
      ['1999-01-01', LATEST_PROTOCOL_VERSION],
    ]) {
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      const seen = frames(stdout);
      const front = startStdioFront(IDENTITY, stdin, stdout);
      stdin.write(line(initialize(1, { protocolVersion: asked })));
      await settle();
      expect((seen[0]!.result as { protocolVersion: string }).protocolVersion).toBe(expected);
      expect(seen).toEqual(await sdkAlone(line(initialize(1, { protocolVersion: asked }))));
      front.close();
    }
  });

  it('an initialize split over chunks (CRLF ended) is answered once it is whole', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const seen = frames(stdout);
    const front = startStdioFront(IDENTITY, stdin, stdout);
    const text = JSON.stringify(initialize(7));
    stdin.write(text.slice(0, 10));
    await settle();
    expect(seen).toEqual([]);
    stdin.write(`${text.slice(10)}\r\n`);
    await settle();
    expect(seen.map((f) => f.id)).toEqual([7]);
    front.close();
  });

  it('leaves to the SDK what it is not sure of: a malformed initialize, another first message, bad JSON', async () => {
    const cases = [
      line(initialize(1, { clientInfo: { name: 'no version' } })),
      line({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) + line(initialize(2)),
      'not json\n' + line(initialize(3)),
    ];
    for (const lines of cases) {
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      const seen = frames(stdout);
      const front = startStdioFront(IDENTITY, stdin, stdout);
      stdin.write(lines);
      await settle();
      expect(front.answered()).toBeNull();
      expect(seen).toEqual([]);
      const server = sdkServer();
      server.onerror = () => undefined; // the bad JSON line
      await server.connect(new StdioServerTransport(front.input, front.output));
      await settle();
      // Everything answered by the SDK exactly as without the front (the malformed one as an error).
      expect(seen).toEqual(await sdkAlone(lines));
      expect(seen.length).toBeGreaterThan(0);
      await server.close();
      front.close();
    }
  });

  it('looks at no more than 64 KiB of a first line: a longer initialize is left to the SDK', async () => {
    for (const [size, early] of [
      [1_000, true],
      [70_000, false],
    ] as const) {
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      const seen = frames(stdout);
      const front = startStdioFront(IDENTITY, stdin, stdout);
      const text = line(initialize(1, { clientInfo: { name: 'x'.repeat(size), version: '1' } }));
      for (let i = 0; i < text.length; i += 4096) stdin.write(text.slice(i, i + 4096));
      await settle();
      expect(front.answered() !== null).toBe(early);
      const server = sdkServer();
      await server.connect(new StdioServerTransport(front.input, front.output));
      await settle();
      expect(seen.map((f) => f.id)).toEqual([1]); // answered once either way
      await server.close();
      front.close();
    }
  });

  it('stops reading stdin when closed, so nothing keeps the process alive', () => {
    const stdin = new PassThrough();
    const front = startStdioFront(IDENTITY, stdin, new PassThrough());
    expect(stdin.listenerCount('data')).toBe(1);
    front.close();
    expect(stdin.listenerCount('data')).toBe(0);
    expect(stdin.listenerCount('end')).toBe(0);
    expect(stdin.isPaused()).toBe(true);
  });
});
