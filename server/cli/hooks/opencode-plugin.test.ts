import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir, createTempRepo } from '../../test-support/temp-repo.ts';
import { startTestServer } from '../../test-support/server-harness.ts';
import {
  PLUGIN_MARKER,
  installOpencodePlugin,
  opencodePluginFile,
  opencodePluginSource,
  uninstallOpencodePlugin,
  type PluginContext,
} from './opencode-plugin.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Hook = (...args: unknown[]) => Promise<void>;
type Hooks = Record<string, Hook>;

/** Writes the plugin as the installer would and loads it as opencode does: an ES module's exported async function. */
async function loadPlugin(ctx: PluginContext, directory: string): Promise<Hooks> {
  const dir = createTempDir('rundiff-opencode-');
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = opencodePluginFile('project', { workspace: dir, home: dir });
  expect(installOpencodePlugin(file, ctx)).toBe('created');
  const mod = (await import(pathToFileURL(file.file).href)) as {
    RundiffPlugin: (i: { directory: string }) => Promise<Hooks>;
  };
  return mod.RundiffPlugin({ directory });
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
    const hooks = await loadPlugin(
      { server, hookScript: '/nonexistent', node: process.execPath, autostart: false },
      ws,
    );
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
      { server: `http://127.0.0.1:${port}`, hookScript: '/nonexistent', node: process.execPath, autostart: false },
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

  it('install writes the plugin once, keeps a file that is not its own, and uninstall removes exactly its plugin', () => {
    const ws = createTempDir('rundiff-opencode-ws-');
    cleanups.push(() => fs.rmSync(ws, { recursive: true, force: true }));
    const ctx: PluginContext = {
      server: 'http://127.0.0.1:7420',
      hookScript: '/x/rundiff-hook.js',
      node: '/usr/bin/node',
      autostart: true,
    };
    const other = path.join(ws, '.opencode', 'plugins', 'other.js');
    fs.mkdirSync(path.dirname(other), { recursive: true });
    fs.writeFileSync(other, 'export const Other = async () => ({});\n');
    const file = opencodePluginFile('project', { workspace: ws, home: '/home/none' });
    expect(file).toEqual({ root: ws, file: path.join(ws, '.opencode', 'plugins', 'rundiff.js') });

    expect(installOpencodePlugin(file, ctx)).toBe('created');
    expect(installOpencodePlugin(file, ctx)).toBe('unchanged');
    expect(fs.readFileSync(file.file, 'utf8')).toBe(opencodePluginSource(ctx));
    expect(installOpencodePlugin(file, { ...ctx, server: 'http://127.0.0.1:7421' })).toBe('updated');
    expect(fs.readdirSync(path.dirname(file.file)).sort()).toEqual(['other.js', 'rundiff.js']);

    expect(uninstallOpencodePlugin(file)).toBe(true);
    expect(uninstallOpencodePlugin(file)).toBe(false);
    expect(fs.readdirSync(path.dirname(file.file))).toEqual(['other.js']);
    expect(fs.readFileSync(other, 'utf8')).toBe('export const Other = async () => ({});\n');

    // a rundiff.js that someone else wrote is neither overwritten nor removed
    fs.writeFileSync(file.file, 'export const Mine = async () => ({});\n');
    expect(() => installOpencodePlugin(file, ctx)).toThrow(/not rundiff's plugin/);
    expect(uninstallOpencodePlugin(file)).toBe(false);
    expect(fs.readFileSync(file.file, 'utf8')).toBe('export const Mine = async () => ({});\n');
    expect(opencodePluginSource(ctx).startsWith(PLUGIN_MARKER)).toBe(true);
  });
});
