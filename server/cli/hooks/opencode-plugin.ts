import { below, readHookText, removeHookFile, writeHookFile, type HookPath } from './hook-file.ts';

/**
 * opencode has no command hooks: it loads plugins, JavaScript modules in `.opencode/plugins/` (the
 * project) or `~/.config/opencode/plugins/` (the user). rundiff installs one small plugin of its
 * own that posts what opencode hands its hooks to `POST /api/hooks/opencode` with fetch (no process
 * per event). The plugin waits for the answer to tool.execute.before, so the tool's checkpoint
 * exists before the tool runs; it never throws into opencode; when no server answers it hands the
 * payload to the hook client, which starts one (unless autostart is off).
 */

/** The first line of the plugin: how uninstall knows the file is rundiff's. */
export const PLUGIN_MARKER = '// rundiff hooks plugin for opencode (written by `rundiff hooks install opencode`)';

export interface PluginContext {
  /** `http://host:port` of the rundiff server. */
  server: string;
  /** Absolute path of bin/rundiff-hook.js, run when no server answers. */
  hookScript: string;
  node: string;
  autostart: boolean;
}

export type PluginScope = 'project' | 'user';

export const opencodePluginFile = (scope: PluginScope, where: { workspace: string; home: string }): HookPath =>
  scope === 'user'
    ? below(where.home, '.config', 'opencode', 'plugins', 'rundiff.js')
    : below(where.workspace, '.opencode', 'plugins', 'rundiff.js');

/** The plugin's source: plain JavaScript, its settings written in as JSON literals. */
export function opencodePluginSource(ctx: PluginContext): string {
  const settings = JSON.stringify({
    server: ctx.server,
    client: ctx.autostart ? [ctx.node, ctx.hookScript, 'opencode', '--server', ctx.server] : null,
  });
  return `${PLUGIN_MARKER}
// It posts opencode's prompts, tool calls, session events and the last reply text to rundiff.
// Remove it with \`rundiff hooks uninstall opencode\`.
import { spawn } from 'node:child_process';

const SETTINGS = ${settings};
const TIMEOUT_MS = 30000;

// Hands a payload to the hook client (it starts a server when none answers), waiting at most TIMEOUT_MS.
function viaClient(body) {
  return new Promise((resolve) => {
    try {
      const [cmd, ...args] = SETTINGS.client;
      const child = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'ignore'] });
      const timer = setTimeout(() => { child.kill(); resolve(); }, TIMEOUT_MS);
      child.on('error', () => { clearTimeout(timer); resolve(); });
      child.on('exit', () => { clearTimeout(timer); resolve(); });
      child.stdin.on('error', () => {});
      child.stdin.end(JSON.stringify(body));
    } catch {
      resolve();
    }
  });
}

async function post(body) {
  try {
    const headers = { 'content-type': 'application/json' };
    if (process.env.RUNDIFF_TOKEN) headers.authorization = 'Bearer ' + process.env.RUNDIFF_TOKEN;
    const res = await fetch(SETTINGS.server + '/api/hooks/opencode', {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await res.arrayBuffer();
  } catch {
    if (SETTINGS.client) await viaClient(body);
  }
}

const textParts = (parts) =>
  Array.isArray(parts)
    ? parts
        .filter((p) => p && p.type === 'text' && typeof p.text === 'string')
        .map((p) => ({ type: 'text', text: p.text, synthetic: p.synthetic === true }))
    : [];

export const RundiffPlugin = async ({ directory }) => {
  // The last assistant text of each session, sent with session.idle (opencode's events carry none).
  const replies = new Map();
  const userMessages = new Set();
  const guard = (fn) => async (...args) => {
    try {
      await fn(...args);
    } catch {
      // never into opencode
    }
  };
  return {
    'chat.message': guard(async (input, output) => {
      if (output && output.message && output.message.id) userMessages.add(output.message.id);
      await post({
        hook: 'chat.message',
        directory,
        input: { sessionID: input.sessionID, messageID: input.messageID },
        output: { message: { id: output && output.message && output.message.id }, parts: textParts(output && output.parts) },
      });
    }),
    'tool.execute.before': guard(async (input, output) => {
      await post({
        hook: 'tool.execute.before',
        directory,
        input: { tool: input.tool, sessionID: input.sessionID, callID: input.callID },
        output: { args: output && output.args },
      });
    }),
    'tool.execute.after': guard(async (input, output) => {
      const exit = output && output.metadata && output.metadata.exit;
      await post({
        hook: 'tool.execute.after',
        directory,
        input: { tool: input.tool, sessionID: input.sessionID, callID: input.callID },
        output: { title: output && output.title, metadata: typeof exit === 'number' ? { exit } : {} },
      });
    }),
    event: guard(async ({ event }) => {
      const props = event.properties || {};
      if (event.type === 'message.part.updated') {
        const part = props.part || {};
        if (part.type === 'text' && !part.synthetic && !userMessages.has(part.messageID) && typeof part.text === 'string')
          replies.set(part.sessionID, part.text);
        return;
      }
      if (event.type !== 'session.created' && event.type !== 'session.idle' && event.type !== 'session.error') return;
      const body = { hook: 'event', directory, event: { type: event.type, properties: props } };
      if (event.type === 'session.idle' && replies.has(props.sessionID)) {
        body.reply = replies.get(props.sessionID);
        replies.delete(props.sessionID);
      }
      await post(body);
    }),
  };
};
`;
}

/** Writes the plugin; says whether the file changed. A file of the same name that is not rundiff's is refused. */
export function installOpencodePlugin(file: HookPath, ctx: PluginContext): 'created' | 'updated' | 'unchanged' {
  const source = opencodePluginSource(ctx);
  const before = readHookText(file);
  if (before !== null && !before.startsWith(PLUGIN_MARKER))
    throw new Error(`${file.file} exists and is not rundiff's plugin; left unchanged`);
  if (before === source) return 'unchanged';
  writeHookFile(file, source, { perm: 0o644 });
  return before === null ? 'created' : 'updated';
}

/** Removes the plugin when it is rundiff's; says whether it did. */
export function uninstallOpencodePlugin(file: HookPath): boolean {
  const text = readHookText(file);
  if (text === null || !text.startsWith(PLUGIN_MARKER)) return false;
  removeHookFile(file);
  return true;
}
