import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempRepo } from '../../test-support/temp-repo.ts';
import { startTestServer } from '../../test-support/server-harness.ts';
import { opencodePluginOptions, opencodePluginUrl, opencodeTarget } from './opencode-plugin.ts';
import type { InstallContext } from './targets.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Hook = (...args: unknown[]) => Promise<void>;
type Hooks = Record<string, Hook>;

/** The checkout's hook client: the plugin file is beside it. */
const HOOK_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/rundiff-hook.js');

type PluginContext = Pick<InstallContext, 'server' | 'hookScript' | 'node' | 'autostart'>;

/**
 * Loads the plugin as opencode does, from the URL and with the options the installer writes into
 * opencode.json: an ES module's exported async function, called with opencode's context and them.
 */
async function loadPlugin(ctx: PluginContext, directory: string): Promise<Hooks> {
  const [url, options] = (
    opencodeTarget.add({}, { ...ctx, workspace: directory, home: directory, token: false }).plugin as [
      string,
      unknown,
    ][]
  )[0]!;
  const mod = (await import(url)) as {
    RundiffPlugin: (i: { directory: string }, options: unknown) => Promise<Hooks>;
  };
  return mod.RundiffPlugin({ directory }, options);
}

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('the opencode plugin', () => {
  it('records a prompt with a write and a shell block, a read without one, and the reply, against the real server', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const repo = createTempRepo({ files: { 'README.md': '# demo\n' }, git: true });
    cleanups.push(() => repo.cleanup());
    const ws = repo.dir;
    const server = `http://127.0.0.1:${t.server.port}`;
    const hooks = await loadPlugin({ server, hookScript: HOOK_SCRIPT, node: process.execPath, autostart: false }, ws);
    const sid = 'ses_plugin1';
    const ev = (type: string, properties: object) => hooks.event!({ event: { type, properties } });

    await ev('session.created', { info: { id: sid, directory: ws, title: 'Greeting' } });
    await hooks['chat.message']!(
      { sessionID: sid, messageID: 'msg_u1' },
      { message: { id: 'msg_u1', role: 'user' }, parts: [{ type: 'text', text: 'Add a greeting' }] },
    );
    await hooks['tool.execute.before']!(
      { tool: 'write', sessionID: sid, callID: 'call_w' },
      { args: { filePath: path.join(ws, 'hello.txt'), content: 'hi\n' } },
    );
    // the tool runs once the before hook has answered: its checkpoint exists by then
    fs.writeFileSync(path.join(ws, 'hello.txt'), 'hi\n');
    await hooks['tool.execute.after']!(
      { tool: 'write', sessionID: sid, callID: 'call_w' },
      { title: 'hello.txt', output: '', metadata: {} },
    );
    await hooks['tool.execute.before']!(
      { tool: 'read', sessionID: sid, callID: 'call_r' },
      { args: { filePath: 'README.md' } },
    );
    await hooks['tool.execute.after']!(
      { tool: 'read', sessionID: sid, callID: 'call_r' },
      { title: 'README.md', output: '# demo', metadata: {} },
    );
    await hooks['tool.execute.before']!(
      { tool: 'bash', sessionID: sid, callID: 'call_b' },
      { args: { command: 'echo done > build.log', description: 'log' } },
    );
    fs.writeFileSync(path.join(ws, 'build.log'), 'done\n');
    await hooks['tool.execute.after']!(
      { tool: 'bash', sessionID: sid, callID: 'call_b' },
      { title: 'log', output: '', metadata: { exit: 0, output: '' } },
    );
    await ev('message.part.updated', {
      part: { type: 'text', sessionID: sid, messageID: 'msg_a1', text: 'Added hello' },
    });
    await ev('message.part.updated', {
      part: { type: 'text', sessionID: sid, messageID: 'msg_a1', text: 'Added hello.txt.' },
    });
    await ev('session.idle', { sessionID: sid });

    const d = (await t.get(`/api/hermes/sessions/${encodeURIComponent(`opencode:${sid}`)}`)).body;
    expect(d.session.workspace).toBe(ws);
    expect(d.runs.map((r: { run_id: string; status: string }) => `${r.run_id} ${r.status}`)).toEqual([
      'msg_u1 completed',
    ]);
    expect(d.messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`)).toEqual([
      'user: Add a greeting',
      'assistant: Added hello.txt.',
    ]);
    expect(d.tool_calls.map((c: { name: string; status: string }) => `${c.name} ${c.status}`)).toEqual([
      'write: hello.txt completed',
      'bash: echo done > build.log completed',
    ]);
    const files = (changeId: string) =>
      d.changes
        .find((c: { change_id: string }) => c.change_id === changeId)
        .files.map((f: { path: string; change_type: string }) => `${f.change_type} ${f.path}`);
    expect(files('tool:call_w')).toEqual(['added hello.txt']);
    expect(files('tool:call_b')).toEqual(['added build.log']);
    expect(files('run:msg_u1')).toEqual(['added build.log', 'added hello.txt']);
  });

  it('never throws into opencode: no server answering, and inputs it does not expect', async () => {
    const port = await closedPort();
    const hooks = await loadPlugin(
      { server: `http://127.0.0.1:${port}`, hookScript: HOOK_SCRIPT, node: process.execPath, autostart: false },
      '/tmp',
    );
    await expect(
      hooks['tool.execute.before']!({ tool: 'bash', sessionID: 's', callID: 'c' }, { args: {} }),
    ).resolves.toBeUndefined();
    await expect(hooks['chat.message']!(undefined, undefined)).resolves.toBeUndefined();
    await expect(hooks['tool.execute.after']!(null, null)).resolves.toBeUndefined();
    await expect(hooks.event!({})).resolves.toBeUndefined();
    await expect(hooks.event!(undefined)).resolves.toBeUndefined();
  });

  it('install names the plugin file once in opencode.json with its settings, keeps other plugins, and uninstall removes exactly its entry', () => {
    const ctx: InstallContext = {
      workspace: '/w',
      home: '/h',
      server: 'http://127.0.0.1:7420',
      hookScript: '/x/bin/rundiff-hook.js',
      node: '/usr/bin/node',
      token: false,
      autostart: true,
    };
    const ours = [
      pathToFileURL('/x/bin/rundiff-opencode.js').href,
      {
        server: 'http://127.0.0.1:7420',
        client: ['/usr/bin/node', '/x/bin/rundiff-hook.js', 'opencode', '--server', 'http://127.0.0.1:7420'],
      },
    ];
    expect(opencodeTarget.add({}, ctx)).toEqual({ plugin: [ours] });
    expect(opencodePluginUrl(ctx.hookScript)).toBe(ours[0]);
    expect(opencodePluginOptions({ ...ctx, autostart: false })).toEqual({ server: ctx.server, client: null });

    const mine = { model: 'x/y', plugin: ['opencode-wakatime', ['file:///home/me/mine.js', { a: 1 }]] };
    const added = opencodeTarget.add(mine, ctx);
    expect(added).toEqual({ model: 'x/y', plugin: [...mine.plugin, ours] });
    expect(opencodeTarget.installed(added)).toBe(true);
    expect(opencodeTarget.installed(mine)).toBe(false);
    // installing again (another server) replaces rundiff's entry: one entry
    const again = opencodeTarget.add(added, { ...ctx, server: 'http://127.0.0.1:7421' });
    expect((again.plugin as unknown[]).length).toBe(3);

    expect(opencodeTarget.remove(again)).toEqual({ settings: mine, removed: 1 });
    expect(opencodeTarget.remove(mine)).toEqual({ settings: mine, removed: 0 });
    // rundiff's entry alone: the list goes with it
    expect(opencodeTarget.remove({ plugin: [ours] })).toEqual({ settings: {}, removed: 1 });
    // a plugin value that is not a list is refused, not replaced
    expect(() => opencodeTarget.add({ plugin: 'x' }, ctx)).toThrow(/"plugin" is not a list/);
  });

  it('the plugin file imports nothing but a Node built-in (opencode installs nothing for it)', () => {
    const source = fs.readFileSync(fileURLToPath(opencodePluginUrl(HOOK_SCRIPT)), 'utf8');
    const imports = [...source.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
    expect(imports).toEqual(['node:child_process']);
  });
});
