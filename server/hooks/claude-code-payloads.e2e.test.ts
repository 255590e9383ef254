/**
 * The real Claude Code CLI, offline against a scripted model, posting its hook payloads through
 * `type: "http"` hooks to a recording server: pins what the mapping relies on (the events, their
 * order, the ids that tie them together) and keeps the fixture payloads true to the CLI.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { claudeCodeSupported, ensureClaudeCode, runClaudeCode } from '../test-support/claude-code.ts';
import { startScriptedAnthropic, type ScriptedPrompt } from '../test-support/scripted-anthropic.ts';
import { createTempDir, createTempRepo } from '../test-support/temp-repo.ts';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/claude-code');
const HTTP_EVENTS = ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'StopFailure'];

interface Payload {
  session_id: string;
  prompt_id?: string;
  hook_event_name: string;
  tool_name?: string;
  tool_use_id?: string;
  cwd: string;
  prompt?: string;
  last_assistant_message?: string;
}

/** A server that records every JSON body posted to it and answers the neutral `{}`. */
async function startRecorder(): Promise<{ url: string; got: Payload[]; close(): Promise<void> }> {
  const got: Payload[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Payload);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    got,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

describe.skipIf(!claudeCodeSupported)('Claude Code 2.1.328 hook payloads (real CLI, offline)', () => {
  let bin = '';
  beforeAll(async () => {
    bin = await ensureClaudeCode();
  }, 600_000);

  it('posts one payload per prompt, tool call and stop, tied by session, prompt and tool-use ids, across --continue', async () => {
    const repo = createTempRepo({ files: { 'README.md': 'hello\n', 'src/app.txt': 'alpha\nbeta\n' } });
    cleanups.push(() => repo.cleanup());
    const home = createTempDir('rundiff-agent-home-');
    cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const ws = repo.dir;
    const script: ScriptedPrompt[] = [
      {
        match: 'first prompt',
        turns: [
          { tool: 'Write', input: { file_path: path.join(ws, 'notes.txt'), content: 'one\ntwo\n' } },
          { tool: 'Read', input: { file_path: path.join(ws, 'src/app.txt') } },
          { tool: 'Edit', input: { file_path: path.join(ws, 'src/app.txt'), old_string: 'beta', new_string: 'gamma' } },
          { text: 'First reply.' },
        ],
      },
      {
        match: 'second prompt',
        turns: [
          { tool: 'Bash', input: { command: "sed -i 's/hello/goodbye/' README.md", description: 'Edit the readme' } },
          { tool: 'Bash', input: { command: 'false', description: 'Fail' } },
          { text: 'Second reply.' },
        ],
      },
    ];
    const model = await startScriptedAnthropic(script);
    cleanups.push(() => model.close());
    const recorder = await startRecorder();
    cleanups.push(() => recorder.close());
    const hooks = Object.fromEntries(
      HTTP_EVENTS.map((e) => [
        e,
        [{ ...(e.includes('Tool') ? { matcher: '*' } : {}), hooks: [{ type: 'http', url: `${recorder.url}/${e}` }] }],
      ]),
    );
    repo.write('.claude/settings.local.json', JSON.stringify({ hooks }, null, 2));

    const first = await runClaudeCode('Please handle the first prompt.', { bin, cwd: ws, home, modelUrl: model.url });
    const second = await runClaudeCode('Now the second prompt.', {
      bin,
      cwd: ws,
      home,
      modelUrl: model.url,
      args: ['--continue'],
    });
    expect(first, first.stderr).toMatchObject({ code: 0 });
    expect(first.stdout).toContain('First reply.');
    expect(second, second.stderr).toMatchObject({ code: 0 });
    expect(second.stdout).toContain('Second reply.');
    // The agent really ran its tools.
    expect(repo.read('notes.txt').toString()).toBe('one\ntwo\n');
    expect(repo.read('src/app.txt').toString()).toBe('alpha\ngamma\n');
    expect(repo.read('README.md').toString()).toBe('goodbye\n');

    const got = recorder.got;
    expect(got.map((p) => [p.hook_event_name, p.tool_name ?? null])).toEqual([
      ['UserPromptSubmit', null],
      ['PreToolUse', 'Write'],
      ['PostToolUse', 'Write'],
      ['PreToolUse', 'Read'],
      ['PostToolUse', 'Read'],
      ['PreToolUse', 'Edit'],
      ['PostToolUse', 'Edit'],
      ['Stop', null],
      ['UserPromptSubmit', null],
      ['PreToolUse', 'Bash'],
      ['PostToolUse', 'Bash'],
      ['PreToolUse', 'Bash'],
      ['PostToolUseFailure', 'Bash'],
      ['Stop', null],
    ]);
    // One session across --continue; one prompt id per prompt, on every payload of that prompt.
    expect(new Set(got.map((p) => p.session_id)).size).toBe(1);
    expect(new Set(got.map((p) => p.cwd))).toEqual(new Set([ws]));
    const promptIds = got.map((p) => p.prompt_id);
    expect(new Set(promptIds.slice(0, 8)).size).toBe(1);
    expect(new Set(promptIds.slice(8)).size).toBe(1);
    expect(promptIds[0]).not.toBe(promptIds[8]);
    // Each post event carries its pre event's tool-use id.
    for (let i = 1; i < got.length; i += 2) {
      if (!got[i]!.tool_use_id) continue;
      expect(got[i + 1]!.tool_use_id).toBe(got[i]!.tool_use_id);
    }
    expect(got[0]!.prompt).toBe('Please handle the first prompt.');
    expect(got[7]!.last_assistant_message).toBe('First reply.');
    expect(got[13]!.last_assistant_message).toBe('Second reply.');

    // The stored fixtures have exactly the fields the CLI sends for the same events.
    const keysOf = (o: object) => Object.keys(o).sort();
    const fixture = (name: string) =>
      JSON.parse(fs.readFileSync(path.join(fixtures, `${name}.json`), 'utf8')) as object;
    expect(keysOf(fixture('user-prompt-submit-1'))).toEqual(keysOf(got[0]!));
    expect(keysOf(fixture('pre-tool-use-write'))).toEqual(keysOf(got[1]!));
    expect(keysOf(fixture('post-tool-use-write'))).toEqual(keysOf(got[2]!));
    expect(keysOf(fixture('post-tool-use-failure-bash-false'))).toEqual(keysOf(got[12]!));
    expect(keysOf(fixture('stop-1'))).toEqual(keysOf(got[7]!));
  }, 180_000);
});
