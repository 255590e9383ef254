import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startMcpClient } from '../test-support/mcp-client.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo, type TempRepo } from '../test-support/index.ts';

/**
 * `blame_file` on `rundiff mcp`, driven by the MCP SDK's Client (which checks structured content
 * against the listed output schema): through the server with `--server`, over the database with
 * `--db`; both answer what `GET /api/hermes/sessions/:id/blame` answers.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function mcp(args: string[]): Promise<Client> {
  const { client, close } = await startMcpClient(args, {}, 'blame-client');
  cleanups.push(close);
  return client;
}

async function recorded(t: TestServer, r: TempRepo): Promise<void> {
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: r.dir });
  await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1', title: 'Louder' });
  await t.post({ type: 'message', session_id: 's1', run_id: 'r1', role: 'user', content: 'make line two louder' });
  await t.post({ type: 'tool.started', session_id: 's1', run_id: 'r1', tool_call_id: 't1', name: 'Edit' });
  r.write('a.txt', 'one\nTWO\nthree\n');
  await t.post({ type: 'tool.completed', session_id: 's1', run_id: 'r1', tool_call_id: 't1' });
  await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
}

type Result = Awaited<ReturnType<Client['callTool']>>;
const textOf = (r: Result) => (r.content as { text: string }[])[0]!.text;

describe('blame_file of rundiff mcp', () => {
  for (const mode of ['--server', '--db'] as const) {
    it(`${mode}: names the tool call that wrote a line, as the REST blame does`, async () => {
      const t = await startTestServer();
      cleanups.push(() => t.close());
      const r = createTempRepo({ files: { 'a.txt': 'one\ntwo\nthree\n' } });
      cleanups.push(() => r.cleanup());
      await recorded(t, r);
      const client = await mcp(['--workspace', r.dir, mode, mode === '--server' ? t.server.url : t.dbPath]);
      const listed = (await client.listTools()).tools.find((x) => x.name === 'blame_file');
      expect(listed?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      const got = await client.callTool({ name: 'blame_file', arguments: { session_id: 's1', path: 'a.txt' } });
      expect(got.isError).toBeFalsy();
      const rest = (await t.get('/api/hermes/sessions/s1/blame?path=a.txt')).body.blame;
      expect(got.structuredContent).toEqual(rest);
      expect(textOf(got)).toBe('1  before any recorded run\n2  Louder · Edit t1\n3  before any recorded run');
      const missing = await client.callTool({ name: 'blame_file', arguments: { session_id: 's1', path: 'b.txt' } });
      expect(missing.isError).toBe(true);
      expect(textOf(missing)).toContain('not_found');
    });
  }
});
