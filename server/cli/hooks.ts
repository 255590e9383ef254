import path from 'node:path';
import { inPackage } from '../package-root.ts';
import { defaultDbPath, resolveConfig } from '../config.ts';
import { AppError } from '../errors.ts';
import { parseArgs, UsageError } from './args.ts';
import { createBackups, type Backups } from './hooks/backup.ts';
import { createFolderLedger } from './hooks/created-folders.ts';
import { readHookText, removeEmptyHookFolder, removeHookFile, writeHookFile } from './hooks/hook-file.ts';
import { checkHooksShape, parseObject, rewrite, type JsonObject } from './hooks/json-file.ts';
import { ALL_INSTALL_TARGETS as INSTALL_TARGETS } from './hooks/registry.ts';
import type { InstallContext, InstallTarget, Scope } from './hooks/targets.ts';
import { defaultServerUrl } from './run-target.ts';

const HELP = `usage: rundiff hooks install <agent> [--workspace DIR] [--server URL] [--user] [--no-autostart]
       rundiff hooks uninstall <agent> [--workspace DIR] [--user]
       rundiff hooks status [--workspace DIR] [--server URL]

Feeds rundiff from an agent's own hooks: one run per prompt, one block per editing tool, the
prompts and replies. install merges rundiff's hooks into the agent's settings (other settings and
hooks are kept; installing twice leaves one set); uninstall removes exactly those.

  --workspace DIR   the project (default: the current folder)
  --user            the user's settings instead of the project's
  --server URL      the rundiff server (default http://$RUNDIFF_HOST:$RUNDIFF_PORT, http://127.0.0.1:7420)
  --no-autostart    the hooks do not start a server when none answers

agents: ${Object.keys(INSTALL_TARGETS).join(', ')}
`;

export interface HooksCommandEnv {
  env: Record<string, string | undefined>;
  cwd: string;
  out: (line: string) => void;
  /** The hook client's path (tests run the repository's). */
  hookScript?: string;
}

const HOOK_SCRIPT = inPackage('bin', 'rundiff-hook.js');

export async function run(argv: string[]): Promise<number> {
  return hooksCommand(argv, { env: process.env, cwd: process.cwd(), out: (l) => process.stdout.write(`${l}\n`) });
}

export async function hooksCommand(argv: string[], io: HooksCommandEnv): Promise<number> {
  let args;
  try {
    args = parseArgs(argv, { values: ['workspace', 'server'], booleans: ['user', 'no-autostart', 'help'] });
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`rundiff hooks: ${err.message}\n\n${HELP}`);
      return 2;
    }
    throw err;
  }
  const [action, agent, ...extra] = args.positional;
  if (args.booleans.has('help') || action === undefined) {
    process.stdout.write(HELP);
    return action === undefined && !args.booleans.has('help') ? 2 : 0;
  }
  const config = resolveConfig({}, io.env);
  const server = (args.values.server ?? defaultServerUrl(config)).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+$/.test(server))
    throw new AppError('invalid_input', `--server must be http://host:port, got ${JSON.stringify(server)}`);
  const workspace = path.resolve(io.cwd, args.values.workspace ?? '.');
  const ctx: InstallContext = {
    workspace,
    home: config.homeDir,
    server,
    hookScript: io.hookScript ?? HOOK_SCRIPT,
    node: process.execPath,
    token: config.token !== null,
    autostart: !args.booleans.has('no-autostart'),
  };
  const scope: Scope = args.booleans.has('user') ? 'user' : 'project';

  if (action === 'status') {
    await status(ctx, config.token, io.out);
    return 0;
  }
  if (action !== 'install' && action !== 'uninstall') {
    process.stderr.write(`rundiff hooks: unknown action ${JSON.stringify(action)}\n\n${HELP}`);
    return 2;
  }
  const target = agent !== undefined ? INSTALL_TARGETS[agent as keyof typeof INSTALL_TARGETS] : undefined;
  if (!target || extra.length > 0) {
    process.stderr.write(
      `rundiff hooks: ${agent === undefined ? 'name an agent' : `unknown agent ${JSON.stringify(agent)}`}; one of: ${Object.keys(INSTALL_TARGETS).join(', ')}\n`,
    );
    return 2;
  }
  const dataDir = path.dirname(defaultDbPath(io.env, config.homeDir));
  const backups = createBackups(dataDir);
  const folders = createFolderLedger(dataDir);
  const missing =
    action === 'install' ? folders.missing('kind' in target ? target.where(scope, ctx) : target.file(scope, ctx)) : [];
  if ('kind' in target) {
    // Plugin files, hook executables or a YAML block: the target writes and reports them itself.
    const lines = action === 'install' ? target.install(scope, ctx) : target.uninstall(scope, ctx);
    for (const line of lines) io.out(`${target.agent}: ${line}`);
    if (action === 'install' && !ctx.autostart)
      io.out(`${target.agent}: the hooks will not start a server; run 'rundiff serve' yourself`);
  } else {
    if (action === 'install') install(target, scope, ctx, backups, io.out);
    else uninstall(target, scope, ctx, backups, io.out);
    removeRetired(target, scope, ctx, io.out);
  }
  if (action === 'install') folders.record(target.agent, missing);
  else for (const folder of folders.sweep(target.agent)) io.out(`${target.agent}: removed the empty folder ${folder}`);
  return 0;
}

/** Removes what an earlier release installed elsewhere for the agent (rundiff's files only). */
function removeRetired(target: InstallTarget, scope: Scope, ctx: InstallContext, out: (l: string) => void): void {
  for (const old of target.retired?.(scope, ctx) ?? []) {
    const text = readHookText(old.file);
    if (text === null || text.split('\n', 1)[0] !== old.marker) continue;
    removeHookFile(old.file);
    out(`${target.agent}: removed ${old.file.file} (an earlier rundiff's install)`);
    for (const folder of old.folders)
      if (removeEmptyHookFolder(folder)) out(`${target.agent}: removed the empty folder ${folder.file}`);
  }
}

/** The events whose lists rundiff adds to: what it writes into an empty file. */
const eventsOf = (target: InstallTarget, ctx: InstallContext): string[] => {
  const hooks = target.add({}, ctx).hooks;
  return typeof hooks === 'object' && hooks !== null && !Array.isArray(hooks) ? Object.keys(hooks) : [];
};

function install(
  target: InstallTarget,
  scope: Scope,
  ctx: InstallContext,
  backups: Backups,
  out: (l: string) => void,
): void {
  const where = target.file(scope, ctx);
  const file = where.file;
  const before = readHookText(where);
  const syntax = target.syntax ?? 'json';
  const settings: JsonObject = before === null ? {} : parseObject(file, before, syntax);
  checkHooksShape(file, settings, eventsOf(target, ctx));
  const after = rewrite(file, before, target.add(settings, ctx), syntax);
  if (after === before) out(`${target.agent}: rundiff's hooks are already installed in ${file} (unchanged)`);
  else {
    if (before !== null && !target.installed(settings)) backups.keep(file, before);
    writeHookFile(where, after);
    const verb = before === null ? 'created' : target.installed(settings) ? 'updated' : 'added to';
    out(`${target.agent}: ${verb} ${file}: hooks post to ${ctx.server}/api/hooks/${target.agent}`);
    if (!ctx.autostart) out(`${target.agent}: the hooks will not start a server; run 'rundiff serve' yourself`);
  }
  const note = target.note?.(scope);
  if (note) for (const line of note.split('\n')) out(`${target.agent}: ${line}`);
  const ready = target.readiness?.(target.add(settings, ctx), ctx, after !== before);
  if (ready) out(`${target.agent}: ${ready}`);
}

function uninstall(
  target: InstallTarget,
  scope: Scope,
  ctx: InstallContext,
  backups: Backups,
  out: (l: string) => void,
): void {
  const where = target.file(scope, ctx);
  const file = where.file;
  const before = readHookText(where);
  if (before === null) {
    out(`${target.agent}: nothing to remove (${file} does not exist)`);
    return;
  }
  const syntax = target.syntax ?? 'json';
  const parsed = parseObject(file, before, syntax);
  checkHooksShape(file, parsed, eventsOf(target, ctx));
  const { settings, removed } = target.remove(parsed);
  if (removed === 0) {
    out(`${target.agent}: no rundiff hooks in ${file} (unchanged)`);
    return;
  }
  const original = backups.restore(file, settings, syntax);
  if (original === null && Object.keys(settings).length === 0) {
    // Nothing but rundiff's hooks was in it and no earlier version was kept: the file was rundiff's own.
    removeHookFile(where);
    out(`${target.agent}: removed ${file} (it held only rundiff's hooks)`);
    return;
  }
  writeHookFile(where, original ?? rewrite(file, before, settings, syntax));
  out(`${target.agent}: removed ${removed} rundiff hook${removed === 1 ? '' : 's'} from ${file}`);
}

async function serverAnswers(server: string, token: string | null): Promise<boolean> {
  try {
    const res = await fetch(`${server}/api/health`, {
      signal: AbortSignal.timeout(2_000),
      ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    });
    return res.ok;
  } catch {
    return false;
  }
}

async function status(ctx: InstallContext, token: string | null, out: (l: string) => void): Promise<void> {
  const up = await serverAnswers(ctx.server, token);
  out(
    `server ${ctx.server}: ${up ? 'answering' : 'not answering (the first hook starts one unless installed with --no-autostart)'}`,
  );
  for (const target of Object.values(INSTALL_TARGETS)) {
    const remarks: string[] = [];
    const cells = (['project', 'user'] as const).map((scope) => {
      const file = ('kind' in target ? target.where(scope, ctx) : target.file(scope, ctx)).file;
      let state: string;
      try {
        const text = 'kind' in target ? null : readHookText(target.file(scope, ctx));
        const installed =
          'kind' in target
            ? target.installed(scope, ctx)
            : text !== null && target.installed(parseObject(file, text, target.syntax ?? 'json'));
        state = installed ? 'installed' : 'not installed';
        if (installed && text !== null && !('kind' in target) && target.readiness) {
          const ready = target.readiness(parseObject(file, text, target.syntax ?? 'json'), ctx);
          if (ready !== null) remarks.push(`${target.agent.padEnd(12)} ${'trust'.padEnd(8)} ${ready}`);
        }
      } catch (err) {
        state = `unreadable (${err instanceof Error ? err.message : String(err)})`;
      }
      return { scope, file, state };
    });
    const same = cells[0]!.file === cells[1]!.file;
    for (const c of same ? [cells[1]!] : cells)
      out(`${target.agent.padEnd(12)} ${c.scope.padEnd(8)} ${c.state.padEnd(14)} ${c.file}`);
    // One file for both scopes is checked twice: said once.
    for (const r of new Set(remarks)) out(r);
  }
}
