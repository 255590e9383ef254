import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createTempRepo, type TempRepo } from '../test-support/index.ts';
import { RUNDIFF_BIN } from '../test-support/cli-process.ts';

/**
 * End to end: `node bin/rundiff.js mcp --workspace DIR` as a child process, driven by the SDK's own
 * Client over stdio. The client validates structured content against the listed output schemas, so
 * every success here also proves the output matches its schema.
 */

const BIN = RUNDIFF_BIN;

interface ErrorText {
  error: { code: string; message: string; hint?: string; details?: Record<string, unknown> };
}

function errorOf(result: Awaited<ReturnType<Client['callTool']>>): ErrorText['error'] {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const content = result.content as { type: string; text: string }[];
  return (JSON.parse(content[0]!.text) as ErrorText).error;
}

describe('rundiff mcp over stdio', () => {
  let repo: TempRepo;
  let other: TempRepo;
  let client: Client;
  let stderr = '';
  const stdoutNoise: string[] = [];

  beforeAll(async () => {
    repo = createTempRepo({ files: { 'a.txt': 'one\n', 'b.txt': 'bee\n' } });
    repo.git('config', 'user.name', 'Agent');
    repo.git('config', 'user.email', 'agent@example.invalid');
    other = createTempRepo({ files: { 'o.txt': 'o\n' } });
    // Calls are recorded into a database: keep it out of the user's data folder.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--workspace', repo.dir, '--workspace', other.dir],
      stderr: 'pipe',
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        RUNDIFF_DB: path.join(other.dir, '.calls.db'),
      },
    });
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    client = new Client({ name: 'test', version: '1.0.0' });
    // Anything on stdout that is not a JSON-RPC frame would make the client report an error.
    client.onerror = (err) => stdoutNoise.push(String(err));
    await client.connect(transport);
  });

  afterAll(async () => {
    await client.close();
    repo.cleanup();
    other.cleanup();
  });

  it('lists the six git tools with input and output schemas and read-only/destructive annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'git_status',
      'git_diff',
      'git_log',
      'git_show',
      'git_branch',
      'git_commit',
      'review_comments',
      'review_comments_addressed',
      'search_history',
      'blame_file',
    ]);
    for (const t of tools.filter((x) => x.name.startsWith('git_'))) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
      expect(t.annotations?.readOnlyHint).toBe(t.name !== 'git_commit');
      expect(t.annotations?.destructiveHint).toBe(t.name === 'git_commit');
    }
    const diff = tools.find((t) => t.name === 'git_diff')!;
    expect(Object.keys(diff.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['repository', 'staged', 'path', 'spec', 'offset', 'max_bytes']),
    );
  });

  it('calls every tool: status, diff, commit after the diff, log, show, branch', async () => {
    repo.write('a.txt', 'two\n');
    const status = await client.callTool({ name: 'git_status', arguments: {} });
    expect(status.isError).toBeFalsy();
    expect(status.structuredContent).toMatchObject({ branch: 'main', unstaged: ['a.txt'], clean: false });
    const text = (status.content as { text: string }[])[0]!.text;
    expect(JSON.parse(text)).toEqual(status.structuredContent);

    const diff = await client.callTool({ name: 'git_diff', arguments: { path: 'a.txt' } });
    expect(diff.structuredContent).toMatchObject({ files_changed: 1, next_offset: null, omitted: [] });
    expect((diff.structuredContent as { diff: string }).diff).toContain('+two');

    const commit = await client.callTool({ name: 'git_commit', arguments: { message: 'Say two', paths: ['a.txt'] } });
    expect(commit.isError).toBeFalsy();
    const { hash } = commit.structuredContent as { hash: string };
    expect(repo.git('rev-parse', 'HEAD').trim()).toBe(hash);

    const log = await client.callTool({ name: 'git_log', arguments: { limit: 1 } });
    expect(log.structuredContent).toMatchObject({ commits: [{ hash, subject: 'Say two', author_name: 'Agent' }] });
    const show = await client.callTool({ name: 'git_show', arguments: { ref: 'HEAD' } });
    expect(show.structuredContent).toMatchObject({
      commit: { hash },
      files: [{ path: 'a.txt', additions: 1, deletions: 1 }],
    });
    const branch = await client.callTool({ name: 'git_branch', arguments: {} });
    expect(branch.structuredContent).toEqual({
      current: 'main',
      detached: false,
      branches: [{ name: 'main', upstream: null }],
    });
  });

  it('answers a bad input as an isError result with the JSON error and no structuredContent', async () => {
    const err = errorOf(await client.callTool({ name: 'git_diff', arguments: { max_bytes: 'lots' } }));
    expect(err.code).toBe('invalid_input');
    expect(err.message).toContain('max_bytes');
    expect(errorOf(await client.callTool({ name: 'git_log', arguments: { limit: 201 } })).code).toBe('invalid_input');
    expect(errorOf(await client.callTool({ name: 'git_status', arguments: { stagd: true } })).code).toBe(
      'invalid_input',
    );
  });

  it('answers gate, ref, path and repository failures as isError results with their codes', async () => {
    repo.write('b.txt', 'changed\n');
    const gate = errorOf(await client.callTool({ name: 'git_commit', arguments: { message: 'x', paths: ['b.txt'] } }));
    expect(gate.code).toBe('review_required');
    expect(gate.details?.files).toEqual(['b.txt']);
    expect(gate.hint).toBeTruthy();
    expect(errorOf(await client.callTool({ name: 'git_show', arguments: { ref: '--output=x.txt' } })).code).toBe(
      'invalid_ref',
    );
    expect(errorOf(await client.callTool({ name: 'git_diff', arguments: { path: '../../etc/passwd' } })).code).toBe(
      'invalid_input',
    );
    const missing = errorOf(await client.callTool({ name: 'git_status', arguments: { repository: 'nope' } }));
    expect(missing.code).toBe('repository_not_found');
    expect(missing.details?.candidates).toEqual([path.basename(repo.dir), path.basename(other.dir)]);
  });

  it('picks the second workspace by its label', async () => {
    const res = await client.callTool({ name: 'git_log', arguments: { repository: path.basename(other.dir) } });
    expect(res.structuredContent).toMatchObject({ commits: [{ subject: 'initial' }] });
  });

  it('writes only protocol frames to stdout and logs each call to stderr', () => {
    expect(stdoutNoise).toEqual([]);
    expect(stderr).toMatch(/git_status \S+ ok \d/);
    expect(stderr).toMatch(/git_commit \S+ review_required/);
  });
});
