import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { AppError } from '../../errors.ts';
import { below, type HookPath } from './hook-file.ts';
import type { Json, JsonObject } from './json-file.ts';
import type { InstallContext, InstallTarget, RetiredFile } from './targets.ts';

/**
 * opencode has no command hooks: it loads plugins, JavaScript modules. rundiff's plugin is one
 * fixed file of the installed package (`bin/rundiff-opencode.js`, beside the hook client) that
 * posts what opencode hands its hooks to `POST /api/hooks/opencode` with fetch (no process per
 * event), waits for the answer to tool.execute.before (so the tool's checkpoint exists before the
 * tool runs), never throws into opencode, and hands the payload to the hook client when no server
 * answers. Install names it in the `plugin` list of opencode.json (the project's, or
 * `~/.config/opencode/` with --user) with its settings as the plugin's options. It is not put in a
 * `.opencode/plugins/` folder: opencode 1.18.33 installs `@opencode-ai/plugin` (64 MB, from the
 * registry) into every `.opencode/` folder it finds, whatever the plugin imports.
 */

/**
 * Releases before this one wrote the plugin into `.opencode/plugins/rundiff.js` (the project) or
 * `~/.config/opencode/plugins/rundiff.js` (the user), starting with this line. Left there, opencode
 * would load it beside the entry in opencode.json (every event twice) and install its package into
 * `.opencode/`: install and uninstall remove it, and the plugin folders it leaves empty.
 */
const RETIRED_PLUGIN_MARKER = '// rundiff hooks plugin for opencode (written by `rundiff hooks install opencode`)';

function retiredPlugin(scope: 'project' | 'user', where: { workspace: string; home: string }): RetiredFile[] {
  const [root, ...dirs] = scope === 'user' ? [where.home, '.config', 'opencode'] : [where.workspace, '.opencode'];
  return [
    {
      file: below(root, ...dirs, 'plugins', 'rundiff.js'),
      marker: RETIRED_PLUGIN_MARKER,
      folders: [below(root, ...dirs, 'plugins'), ...(scope === 'project' ? [below(root, ...dirs)] : [])],
    },
  ];
}

/** The plugin's file name, next to bin/rundiff-hook.js. */
export const OPENCODE_PLUGIN_FILE = 'rundiff-opencode.js';

/** The plugin's `file://` URL for the hook client the install names. */
export const opencodePluginUrl = (hookScript: string): string =>
  pathToFileURL(path.join(path.dirname(hookScript), OPENCODE_PLUGIN_FILE)).href;

/** The plugin's options: the server's URL, and the hook client's command line when it may start a server. */
export const opencodePluginOptions = (ctx: InstallContext): JsonObject => ({
  server: ctx.server,
  client: ctx.autostart ? [ctx.node, ctx.hookScript, 'opencode', '--server', ctx.server] : null,
});

/** A `plugin` entry (a spec, or `[spec, options]`) that names rundiff's plugin file. */
function isOurs(entry: Json): boolean {
  const spec = Array.isArray(entry) ? entry[0] : entry;
  return typeof spec === 'string' && spec.startsWith('file:') && spec.endsWith(`/${OPENCODE_PLUGIN_FILE}`);
}

/** opencode.json of a folder, or its opencode.jsonc when only that one is there. */
function configIn(root: string, ...dirs: string[]): HookPath {
  const json = below(root, ...dirs, 'opencode.json');
  const jsonc = below(root, ...dirs, 'opencode.jsonc');
  return !fs.existsSync(json.file) && fs.existsSync(jsonc.file) ? jsonc : json;
}

function pluginList(settings: JsonObject, file: string): Json[] {
  const list = settings.plugin;
  if (list === undefined) return [];
  if (!Array.isArray(list))
    throw new AppError('invalid_input', `${file}: "plugin" is not a list; left unchanged`, {
      hint: 'fix or remove the "plugin" value by hand, then run the command again',
    });
  return list;
}

/** opencode: an entry in the `plugin` list of opencode.json (or opencode.jsonc, which it reads with comments). */
export const opencodeTarget: InstallTarget = {
  agent: 'opencode',
  file: (scope, { workspace, home }) =>
    scope === 'user' ? configIn(home, '.config', 'opencode') : configIn(workspace),
  syntax: 'jsonc',
  note: () =>
    `opencode loads the plugin from rundiff's own folder (${OPENCODE_PLUGIN_FILE}): nothing is written into .opencode/`,
  add(settings, ctx) {
    const rest = pluginList(settings, 'opencode.json').filter((e) => !isOurs(e));
    return { ...settings, plugin: [...rest, [opencodePluginUrl(ctx.hookScript), opencodePluginOptions(ctx)]] };
  },
  remove(settings) {
    const list = Array.isArray(settings.plugin) ? settings.plugin : [];
    const rest = list.filter((e) => !isOurs(e));
    const removed = list.length - rest.length;
    if (removed === 0) return { settings, removed };
    const next: JsonObject = { ...settings };
    if (rest.length > 0) next.plugin = rest;
    else delete next.plugin;
    return { settings: next, removed };
  },
  installed: (settings) => Array.isArray(settings.plugin) && settings.plugin.some(isOurs),
  retired: retiredPlugin,
};
