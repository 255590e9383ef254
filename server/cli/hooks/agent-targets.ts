import type { HookAgent } from '../../hooks/index.ts';
import { below } from './hook-file.ts';
import type { Json, JsonObject } from './json-file.ts';
import { hookCommand, hooksFileTarget, type InstallTarget } from './targets.ts';

/** The installers of Gemini CLI, Cursor and Copilot CLI, whose hooks live in JSON settings files. */

const asObject = (v: Json | undefined): JsonObject | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? v : null;

/** A handler runs rundiff's hook client for `agent` when its command (in `field`) runs bin/rundiff-hook.js for it. */
const runsClient =
  (agent: HookAgent, field: string) =>
  (h: JsonObject): boolean => {
    const command = h[field];
    return typeof command === 'string' && /rundiff-hook\.js'? /.test(command) && command.includes(` ${agent} `);
  };

const GEMINI_EVENTS = ['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent', 'SessionEnd'];
const GEMINI_TOOL_EVENTS = new Set(['BeforeTool', 'AfterTool']);

/**
 * Gemini CLI: command hooks in the `hooks` of `.gemini/settings.json` (the project's, or the
 * user's under `--user`), in the same shape as Claude Code's; they fired in Gemini CLI 0.61.0
 * without further trust. The hook client prints `{}` for Gemini, which reads hook output as JSON.
 * Gemini reads the file with comments (and no trailing commas): rundiff keeps them.
 */
export const geminiTarget: InstallTarget = {
  ...hooksFileTarget(
    'gemini',
    (scope, { workspace, home }) =>
      scope === 'user' ? below(home, '.gemini', 'settings.json') : below(workspace, '.gemini', 'settings.json'),
    (ctx) => {
      const handler: JsonObject = { type: 'command', command: hookCommand('gemini', ctx) };
      return Object.fromEntries(
        GEMINI_EVENTS.map((event) => [
          event,
          { ...(GEMINI_TOOL_EVENTS.has(event) ? { matcher: '*' } : {}), hooks: [handler] },
        ]),
      );
    },
    runsClient('gemini', 'command'),
    () => 'Gemini CLI runs project hooks only in a folder it trusts (its folder trust setting).',
  ),
  // Gemini CLI reads its settings with comments: they are kept.
  syntax: 'jsonc',
};

/**
 * A file whose `hooks` maps each event to a list of handlers (Cursor's hooks.json and Copilot's hook
 * files, both `version: 1`). Adding first removes rundiff's earlier handlers; removing drops events
 * left empty, and the `version` rundiff added along with them.
 */
function handlerListTarget(opts: {
  agent: HookAgent;
  file: InstallTarget['file'];
  events: readonly string[];
  handler: (ctx: Parameters<InstallTarget['add']>[1]) => JsonObject;
  isOurs: (h: JsonObject) => boolean;
  note?: InstallTarget['note'];
}): InstallTarget {
  function remove(settings: JsonObject): { settings: JsonObject; removed: number } {
    const hooks = asObject(settings.hooks);
    if (!hooks) return { settings, removed: 0 };
    let removed = 0;
    const next: JsonObject = {};
    for (const [event, list] of Object.entries(hooks)) {
      if (!Array.isArray(list)) {
        next[event] = list;
        continue;
      }
      const kept = list.filter((h) => {
        const o = asObject(h);
        const ours = o !== null && opts.isOurs(o);
        if (ours) removed++;
        return !ours;
      });
      if (kept.length > 0 || list.length === 0) next[event] = kept;
    }
    const out: JsonObject = { ...settings };
    if (Object.keys(next).length > 0) out.hooks = next;
    else delete out.hooks;
    // `version` alone is what rundiff added to a file that had none of its own.
    if (removed > 0 && Object.keys(out).length === 1 && out.version === 1) delete out.version;
    return { settings: out, removed };
  }
  return {
    agent: opts.agent,
    file: opts.file,
    ...(opts.note ? { note: opts.note } : {}),
    add(settings, ctx) {
      const clean = remove(settings).settings;
      const hooks: JsonObject = { ...(asObject(clean.hooks) ?? {}) };
      for (const event of opts.events) {
        const list = hooks[event];
        hooks[event] = [...(Array.isArray(list) ? list : []), opts.handler(ctx)];
      }
      return { version: 1, ...clean, hooks };
    },
    remove,
    installed: (settings) => remove(settings).removed > 0,
  };
}

const CURSOR_EVENTS = [
  'sessionStart',
  'beforeSubmitPrompt',
  'beforeShellExecution',
  'afterShellExecution',
  'beforeMCPExecution',
  'afterMCPExecution',
  'afterFileEdit',
  'afterAgentResponse',
  'stop',
  'sessionEnd',
];

/**
 * Cursor: `.cursor/hooks.json` of the project, or `~/.cursor/hooks.json` under `--user` (the
 * documented version 1 format), command hooks running the hook client. Cursor reports a file edit
 * only after it happened, so edits land in the prompt's run rather than in blocks of their own.
 */
export const cursorTarget = handlerListTarget({
  agent: 'cursor',
  file: (scope, { workspace, home }) =>
    scope === 'user' ? below(home, '.cursor', 'hooks.json') : below(workspace, '.cursor', 'hooks.json'),
  events: CURSOR_EVENTS,
  handler: (ctx) => ({ command: hookCommand('cursor', ctx) }),
  isOurs: runsClient('cursor', 'command'),
  note: () =>
    'Cursor reports file edits only after they happen: they appear in the prompt run, shell and MCP calls get blocks of their own.',
});

const COPILOT_EVENTS = [
  'sessionStart',
  'userPromptSubmitted',
  'preToolUse',
  'postToolUse',
  'postToolUseFailure',
  'agentStop',
  'sessionEnd',
  'errorOccurred',
];

/**
 * Copilot CLI: a hook file of rundiff's own, `.github/hooks/rundiff.json` in the repository (the
 * documented place Copilot CLI loads hooks from), with `bash` command hooks running the hook client.
 */
export const copilotTarget = handlerListTarget({
  agent: 'copilot',
  file: (_scope, { workspace }) => below(workspace, '.github', 'hooks', 'rundiff.json'),
  events: COPILOT_EVENTS,
  handler: (ctx) => ({ type: 'command', bash: hookCommand('copilot', ctx), timeoutSec: 30 }),
  isOurs: runsClient('copilot', 'bash'),
  note: (scope) =>
    scope === 'user'
      ? 'Copilot CLI loads hooks from the repository (.github/hooks/*.json), so they are installed in the project.'
      : null,
});
