import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startMcpClient } from '../test-support/mcp-client.ts';
import type { SearchResponse } from '../../shared/index.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo, type TempRepo } from '../test-support/index.ts';

/**
 * `search_history` on `rundiff mcp`, driven by the MCP SDK's Client (which checks structured
 * content against the listed output schema): through the server with `--server`, over the
 * database with `--db`; both answer what `GET /api/hermes/search` answers.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function repo(): TempRepo {
  const r = createTempRepo({ files: { 'a.txt': 'one\ntwo\n' } });
  cleanups.push(() => r.cleanup());
  return r;
}

async function mcp(args: string[]): Promise<Client> {
  const { client, close } = await startMcpClient(args, {}, 'search-client');
  cleanups.push(close);
  return client;
}

async function recorded(t: TestServer, r: TempRepo): Promise<void> {
  await t.post({ type: 'session.upsert', session_id: 's1', title: 'Shout', workspace: r.dir });
  await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
  await t.post({ type: 'message', session_id: 's1', run_id: 'r1', role: 'user', content: 'make line two louder' });
  r.write('a.txt', 'one\nTWO LOUDER\n');
  await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
}

type Result = Awaited<ReturnType<Client['callTool']>>;
const textOf = (r: Result) => (r.content as { text: string }[])[0]!.text;

describe('search_history of rundiff mcp', () => {
  for (const mode of ['--server', '--db'] as const) {
    it(`${mode}: finds the changed line with its file and line number, as the REST search does`, async () => {
      const t = await startTestServer();
      cleanups.push(() => t.close());
      const r = repo();
      await recorded(t, r);
      const client = await mcp(['--workspace', r.dir, mode, mode === '--server' ? t.server.url : t.dbPath]);
      const listed = (await client.listTools()).tools.find((x) => x.name === 'search_history');
      expect(listed?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      const got = await client.callTool({ name: 'search_history', arguments: { query: 'louder kind:patch' } });
      expect(got.isError).toBeFalsy();
      const rest = (await t.get('/api/hermes/search?q=louder%20kind:patch')).body as SearchResponse;
      expect(got.structuredContent).toEqual(rest);
      expect(rest.hits[0]).toMatchObject({ path: 'a.txt', line: 2, side: 'after', snippet: '+TWO LOUDER' });
      expect(textOf(got)).toBe(`patch a.txt:2 (after) · session s1 run r1 change run:r1\n  +TWO LOUDER`);
      const scoped = await client.callTool({
        name: 'search_history',
        arguments: { query: 'louder', session_id: 'nope' },
      });
      expect(textOf(scoped)).toBe('No hits.');
      const bad = await client.callTool({ name: 'search_history', arguments: { query: '"open' } });
      expect(bad.isError).toBe(true);
      expect(JSON.parse(textOf(bad)).error).toMatchObject({
        code: 'invalid_input',
        message: expect.stringMatching(/quote/),
      });
    });
  }
});
