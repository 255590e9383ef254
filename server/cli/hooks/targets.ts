import type { HookAgent } from '../../hooks/index.ts';
import { addOurs, hasOurs, removeOurs, type HookGroup } from './hook-list.ts';
import { below, type HookPath } from './hook-file.ts';
import { CODEX_TRUST_STEP, codexHookKeys, codexTrust, codexTrustLine } from './codex-trust.ts';
import type { JsonObject, Syntax } from './json-file.ts';

/** Where an install goes: the project in a workspace, or the user's own settings. */
export type Scope = 'project' | 'user';

export interface InstallContext {
  workspace: string;
  home: string;
  /** `http://host:port` of the rundiff server. */
  server: string;
  /** Absolute path of bin/rundiff-hook.js. */
  hookScript: string;
  /** The node binary the command hooks run. */
  node: string;
  /** Add the token header (RUNDIFF_TOKEN is set). */
  token: boolean;
  /** Let a hook start a server when none answers. */
  autostart: boolean;
}

/**
 * One agent's installer: which file holds its hooks for each scope, and how rundiff's hooks are
 * added to, found in and removed from that file's parsed JSON. Adding an agent is one more target.
 */
export interface InstallTarget {
  agent: HookAgent;
  /** The settings file for a scope, below the folder it must stay in (the workspace or the home folder). */
  file(scope: Scope, ctx: Pick<InstallContext, 'workspace' | 'home'>): HookPath;
  /** Said when installing (what the person must know, e.g. a scope the agent ignores). */
  note?(scope: Scope): string | null;
  /** `jsonc` when the agent reads comments in the file (they are kept); plain JSON otherwise. */
  syntax?: Syntax;
  add(settings: JsonObject, ctx: InstallContext): JsonObject;
  remove(settings: JsonObject): { settings: JsonObject; removed: number };
  installed(settings: JsonObject): boolean;
  /**
   * What keeps the installed hooks from running, checked in the agent's own files (said by install
   * and status); null when nothing does or the agent has no such step. `written`: install has just
   * written these hooks (new or changed).
   */
  readiness?(settings: JsonObject, ctx: Pick<InstallContext, 'workspace' | 'home'>, written?: boolean): string | null;
  /**
   * Files an earlier release installed for the agent in another place, removed by install and
   * uninstall when their first line is `marker` (rundiff's), with the listed folders when that
   * leaves them empty (deepest first).
   */
  retired?(scope: Scope, ctx: Pick<InstallContext, 'workspace' | 'home'>): RetiredFile[];
}

/** A file of an earlier release's install (see `InstallTarget.retired`). */
export interface RetiredFile {
  file: HookPath;
  marker: string;
  folders: HookPath[];
}

/** A settings file in Claude Code's hooks shape, whose rundiff handlers `isOurs` recognises. */
export function hooksFileTarget(
  agent: HookAgent,
  file: InstallTarget['file'],
  groups: (ctx: InstallContext) => Record<string, HookGroup>,
  isOurs: (h: JsonObject) => boolean,
  note?: InstallTarget['note'],
): InstallTarget {
  return {
    agent,
    file,
    ...(note ? { note } : {}),
    add: (settings, ctx) => addOurs(settings, groups(ctx), isOurs),
    remove: (settings) => removeOurs(settings, isOurs),
    installed: (settings) => hasOurs(settings, isOurs),
  };
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The command a command-type hook runs: the plain hook client for `agent`. */
export function hookCommand(agent: HookAgent, ctx: InstallContext): string {
  return [quote(ctx.node), quote(ctx.hookScript), agent, '--server', quote(ctx.server)]
    .concat(ctx.autostart ? [] : ['--no-autostart'])
    .join(' ');
}
export const runsHookClient = (agent: HookAgent) => (h: JsonObject) =>
  h.type === 'command' &&
  typeof h.command === 'string' &&
  /rundiff-hook\.js'? /.test(h.command) &&
  h.command.includes(` ${agent} `);
const postsToHooksRoute = (agent: HookAgent) => (h: JsonObject) =>
  h.type === 'http' && typeof h.url === 'string' && h.url.endsWith(`/api/hooks/${agent}`);

/** Seconds an agent waits for a hook: the server answers a tool's start once its checkpoint exists. */
const HOOK_TIMEOUT_S = 30;

const CLAUDE_EVENTS = ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'StopFailure'];
const TOOL_EVENTS = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure']);

/**
 * Claude Code: `type: "http"` hooks POST each payload straight to the server (no process per
 * event). SessionStart runs the hook client instead, which starts a server when none answers (an
 * http hook cannot); with autostart off it is an http hook like the others.
 */
export const claudeCodeTarget = hooksFileTarget(
  'claude-code',
  (scope, { workspace, home }) =>
    scope === 'user' ? below(home, '.claude', 'settings.json') : below(workspace, '.claude', 'settings.json'),
  (ctx) => {
    const http: JsonObject = { type: 'http', url: `${ctx.server}/api/hooks/claude-code`, timeout: HOOK_TIMEOUT_S };
    if (ctx.token) {
      // Claude Code fills $VAR in a header only for the variables listed in allowedEnvVars.
      http.headers = { Authorization: 'Bearer $RUNDIFF_TOKEN' };
      http.allowedEnvVars = ['RUNDIFF_TOKEN'];
    }
    const groups: Record<string, HookGroup> = {};
    for (const event of CLAUDE_EVENTS)
      groups[event] = { ...(TOOL_EVENTS.has(event) ? { matcher: '*' } : {}), hooks: [http] };
    groups.SessionStart = {
      hooks: [
        ctx.autostart ? { type: 'command', command: hookCommand('claude-code', ctx), timeout: HOOK_TIMEOUT_S } : http,
      ],
    };
    return groups;
  },
  (h) => postsToHooksRoute('claude-code')(h) || runsHookClient('claude-code')(h),
);

const CODEX_EVENTS = ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'];

/**
 * Codex: command hooks in the user's `~/.codex/hooks.json` running the hook client. A project's
 * `.codex/hooks.json` did not fire in Codex 0.169.0, so both scopes install for the user.
 */
export const codexHooksFile: InstallTarget['file'] = (_scope, { home }) => below(home, '.codex', 'hooks.json');

export const codexTarget: InstallTarget = {
  ...hooksFileTarget(
    'codex',
    codexHooksFile,
    (ctx) => {
      const handler: JsonObject = { type: 'command', command: hookCommand('codex', ctx) };
      const groups: Record<string, HookGroup> = {};
      for (const event of CODEX_EVENTS)
        groups[event] = { ...(TOOL_EVENTS.has(event) ? { matcher: '*' } : {}), hooks: [handler] };
      return groups;
    },
    runsHookClient('codex'),
    (scope) =>
      [
        scope === 'project'
          ? 'Codex reads hooks from ~/.codex/hooks.json only (a project .codex/hooks.json did not fire in Codex 0.169.0), so they are installed for your user.'
          : null,
        'Codex passes its environment to the hook: set RUNDIFF_TOKEN there if the server needs a token.',
      ]
        .filter((s) => s !== null)
        .join('\n'),
  ),
  /** Codex runs only the hooks a person trusted: see `codex-trust.ts`. */
  readiness: (settings, ctx, written = false) => {
    const file = codexHooksFile('user', ctx).file;
    const keys = codexHookKeys(file, settings, runsHookClient('codex'));
    if (written && keys.length > 0)
      return `Codex runs new or changed hooks only once they are trusted and skips the others without a word (codex exec then records nothing). ${CODEX_TRUST_STEP}`;
    return codexTrustLine(codexTrust(below(ctx.home, '.codex', 'config.toml'), keys));
  },
};

/** The installers of this file, by agent; `registry.ts` has every agent's. */
export const INSTALL_TARGETS: Partial<Record<HookAgent, InstallTarget>> = {
  'claude-code': claudeCodeTarget,
  codex: codexTarget,
};
