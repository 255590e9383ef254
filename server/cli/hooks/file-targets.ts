import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../../errors.ts';
import type { HookAgent } from '../../hooks/index.ts';
import { below, readHookText, removeHookFile, writeHookFile, type HookPath } from './hook-file.ts';
import { hookCommand, type InstallContext, type Scope } from './targets.ts';

/**
 * Installers for agents whose hooks are not entries of a JSON settings file: Cline runs executables named after the event, Hermes reads a `hooks:` block in its YAML
 * config. Each says what it did in lines, and touches only what carries rundiff's marker.
 */
export interface FilesTarget {
  agent: HookAgent;
  kind: 'files';
  /** The file or folder it writes, for a scope (shown by status). */
  where(scope: Scope, ctx: Pick<InstallContext, 'workspace' | 'home'>): HookPath;
  install(scope: Scope, ctx: InstallContext): string[];
  uninstall(scope: Scope, ctx: Pick<InstallContext, 'workspace' | 'home'>): string[];
  installed(scope: Scope, ctx: Pick<InstallContext, 'workspace' | 'home'>): boolean;
}

const CLINE_MARKER = '# rundiff hook for Cline';
/** The hook files Cline runs, one per event (named as Cline names them). */
const CLINE_EVENTS = [
  'TaskStart',
  'TaskResume',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'TaskComplete',
  'TaskCancel',
];

const clineDir = (home: string) => path.join(home, '.cline', 'hooks');
const clineHook = (home: string, name: string) => below(home, '.cline', 'hooks', name);
const isOursFile = (file: HookPath, marker: string) =>
  (readHookText(file) ?? '').split('\n', 3)[1]?.startsWith(marker) === true;

/** Another file Cline would take for the same event (`TaskStart`, `TaskStart.py`, any case). */
function othersFor(home: string, event: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(clineDir(home));
  } catch {
    return [];
  }
  const e = event.toLowerCase();
  return names.filter((n) => {
    const l = n.toLowerCase();
    return (l === e || l.startsWith(`${e}.`)) && !isOursFile(clineHook(home, n), CLINE_MARKER);
  });
}

/**
 * Cline: one small executable per event in `~/.cline/hooks/` (the folder the Cline CLI 3.0.65 ran
 * hooks from; a project folder was not seen to fire), running the hook client and answering `{}`-like
 * JSON (`cancel: false`), since Cline reads a hook's output as JSON. An event that already has a
 * hook of the person's is left to it: Cline runs one file per event.
 */
export const clineTarget: FilesTarget = {
  agent: 'cline',
  kind: 'files',
  where: (_scope, { home }) => below(home, '.cline', 'hooks'),
  install(scope, ctx) {
    const dir = clineDir(ctx.home);
    const script = [
      '#!/bin/sh',
      `${CLINE_MARKER} (written by \`rundiff hooks install cline\`; removed by \`rundiff hooks uninstall cline\`)`,
      `${hookCommand('cline', ctx)} >/dev/null 2>&1`,
      `printf '{"cancel":false}\\n'`,
      '',
    ].join('\n');
    const lines: string[] = [];
    const written: string[] = [];
    for (const event of CLINE_EVENTS) {
      const others = othersFor(ctx.home, event);
      if (others.length > 0) {
        lines.push(`left ${event} to your own hook (${others.join(', ')}): Cline runs one hook file per event`);
        continue;
      }
      const file = clineHook(ctx.home, event);
      if (readHookText(file) === script) continue;
      writeHookFile(file, script, { perm: 0o755 });
      written.push(event);
    }
    lines.unshift(
      written.length > 0
        ? `wrote ${written.join(', ')} in ${dir}: they post to ${ctx.server}/api/hooks/cline`
        : `rundiff's hooks are already installed in ${dir} (unchanged)`,
    );
    if (scope === 'project')
      lines.push('the Cline CLI runs hooks from ~/.cline/hooks only, so they are installed for your user');
    return lines;
  },
  uninstall(_scope, { home }) {
    const dir = clineDir(home);
    const removed = CLINE_EVENTS.filter((e) => {
      const file = clineHook(home, e);
      if (!isOursFile(file, CLINE_MARKER)) return false;
      removeHookFile(file);
      return true;
    });
    return [
      removed.length > 0 ? `removed ${removed.join(', ')} from ${dir}` : `no rundiff hooks in ${dir} (unchanged)`,
    ];
  },
  installed: (_scope, { home }) => CLINE_EVENTS.some((e) => isOursFile(clineHook(home, e), CLINE_MARKER)),
};

const HERMES_BEGIN =
  '# >>> rundiff hooks (written by `rundiff hooks install hermes`; removed by `rundiff hooks uninstall hermes`)';
/** Said on the first line when rundiff also added the newline the file lacked before its block. */
const HERMES_BEGIN_NL = `${HERMES_BEGIN} +newline`;
const HERMES_END = '# <<< rundiff hooks';
const HERMES_EVENTS = [
  'on_session_start',
  'pre_llm_call',
  'pre_tool_call',
  'post_tool_call',
  'post_llm_call',
  'on_session_end',
  'on_session_finalize',
];

const hermesConfig = (home: string) => below(home, '.hermes', 'config.yaml');

/** The file without rundiff's block (and the newline it added before it), or null when it has none. */
function withoutHermesBlock(text: string): string | null {
  let at = text.indexOf(HERMES_BEGIN);
  while (at > 0 && text[at - 1] !== '\n') at = text.indexOf(HERMES_BEGIN, at + 1);
  if (at < 0) return null;
  const endLine = text.indexOf(`\n${HERMES_END}`, at);
  if (endLine < 0) return null;
  let stop = endLine + 1 + HERMES_END.length;
  if (text[stop] === '\n') stop++;
  const addedNewline = text.startsWith(HERMES_BEGIN_NL, at);
  const before = addedNewline ? text.slice(0, at).replace(/\n$/, '') : text.slice(0, at);
  return before + text.slice(stop);
}

/**
 * Hermes Agent: shell hooks in a `hooks:` block of `~/.hermes/config.yaml` (the profile's config),
 * appended between two marker comments so the rest of the file (and its comments) stays as it is.
 * A config that already has its own `hooks:` block is refused: YAML has one `hooks:` key, and the
 * lines to merge by hand are printed.
 */
export const hermesTarget: FilesTarget = {
  agent: 'hermes',
  kind: 'files',
  where: (_scope, { home }) => hermesConfig(home),
  install(scope, ctx) {
    const config = hermesConfig(ctx.home);
    const file = config.file;
    const text = readHookText(config) ?? '';
    const rest = withoutHermesBlock(text) ?? text;
    const command = JSON.stringify(hookCommand('hermes', ctx));
    const body = ['hooks:', ...HERMES_EVENTS.flatMap((e) => [`  ${e}:`, `    - command: ${command}`])];
    if (/^hooks\s*:/m.test(rest))
      throw new AppError('invalid_input', `${file} already has a hooks: block; left unchanged`, {
        hint: `add these entries under your hooks: block by hand:\n${body.slice(1).join('\n')}`,
      });
    const needsNewline = rest !== '' && !rest.endsWith('\n');
    const next = `${rest}${needsNewline ? '\n' : ''}${[needsNewline ? HERMES_BEGIN_NL : HERMES_BEGIN, ...body, HERMES_END].join('\n')}\n`;
    const lines: string[] = [];
    if (next === text) lines.push(`rundiff's hooks are already installed in ${file} (unchanged)`);
    else {
      writeHookFile(config, next);
      lines.push(`${text === '' ? 'created' : 'added to'} ${file}: hooks post to ${ctx.server}/api/hooks/hermes`);
    }
    if (scope === 'project')
      lines.push('Hermes reads hooks from its config in ~/.hermes only, so they are installed for your user');
    lines.push(
      'Hermes asks once before it runs a new hook: approve them at its prompt, or run it with --accept-hooks (or HERMES_ACCEPT_HOOKS=1); runs without a terminal skip hooks not yet approved',
    );
    return lines;
  },
  uninstall(_scope, { home }) {
    const config = hermesConfig(home);
    const text = readHookText(config);
    const rest = text === null ? null : withoutHermesBlock(text);
    if (rest === null) return [`no rundiff hooks in ${config.file} (unchanged)`];
    if (rest === '') {
      removeHookFile(config);
      return [`removed ${config.file} (it held only rundiff's hooks)`];
    }
    writeHookFile(config, rest);
    return [`removed rundiff's hooks from ${config.file}`];
  },
  installed: (_scope, { home }) => {
    const text = readHookText(hermesConfig(home));
    return text !== null && withoutHermesBlock(text) !== null;
  },
};
