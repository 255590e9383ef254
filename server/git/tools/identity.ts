import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../../errors.ts';
import { runGit } from '../runner.ts';

/**
 * The committer's identity, found the way git finds it: GIT_AUTHOR_* / GIT_COMMITTER_* in the
 * environment, then the repository's config, then the user's global config. The runner hides the
 * global config from every other call; here one `git config` read (which runs nothing) sees it, and
 * the commit then gets the identity through the environment. No identity = `missing_identity`,
 * never git's guess from the host name.
 */

export interface Identity {
  authorName: string;
  authorEmail: string;
  committerName: string;
  committerEmail: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The user's global config files, most important first (git reads the XDG one, then ~/.gitconfig over it). */
export function globalConfigFiles(env: Env, homeDir: string): string[] {
  if (env.GIT_CONFIG_GLOBAL) return [env.GIT_CONFIG_GLOBAL];
  const xdg =
    env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(homeDir, '.config');
  return [path.join(homeDir, '.gitconfig'), path.join(xdg, 'git', 'config')].filter((f) => fs.existsSync(f));
}

async function readUserConfig(top: string, globalFile: string): Promise<{ name?: string; email?: string }> {
  const res = await runGit({
    cwd: top,
    args: ['config', '-z', '--includes', '--get-regexp', '^user\\.(name|email)$'],
    env: { GIT_CONFIG_GLOBAL: globalFile },
    okExitCodes: [0, 1],
  });
  const out: { name?: string; email?: string } = {};
  for (const rec of res.stdout.toString('utf8').split('\0')) {
    const nl = rec.indexOf('\n');
    if (nl === -1) continue;
    const key = rec.slice(0, nl);
    const value = rec.slice(nl + 1);
    if (key === 'user.name') out.name = value; // later entries win, as in git
    if (key === 'user.email') out.email = value;
  }
  return out;
}

export async function resolveIdentity(
  top: string,
  env: Env = process.env,
  homeDir: string = os.homedir(),
): Promise<Identity> {
  let name: string | undefined;
  let email: string | undefined;
  for (const file of [...globalConfigFiles(env, homeDir), '/dev/null']) {
    const found = await readUserConfig(top, file);
    name ??= found.name;
    email ??= found.email;
    if (name !== undefined && email !== undefined) break;
  }
  const pick = (...vals: (string | undefined)[]) => vals.find((v) => v !== undefined && v.trim() !== '');
  const identity = {
    authorName: pick(env.GIT_AUTHOR_NAME, name),
    authorEmail: pick(env.GIT_AUTHOR_EMAIL, email),
    committerName: pick(env.GIT_COMMITTER_NAME, name, env.GIT_AUTHOR_NAME),
    committerEmail: pick(env.GIT_COMMITTER_EMAIL, email, env.GIT_AUTHOR_EMAIL),
  };
  const missing = Object.entries(identity)
    .filter(([, v]) => v === undefined)
    .map(([k]) => (k.endsWith('Name') ? 'user.name' : 'user.email'));
  if (missing.length > 0) {
    throw new AppError('missing_identity', `no git identity: ${[...new Set(missing)].join(' and ')} not set`, {
      hint: 'Set it once: git config --global user.name "Your Name" && git config --global user.email you@example.com (or per repository without --global).',
      details: { missing: [...new Set(missing)] },
    });
  }
  return identity as Identity;
}

export function identityEnv(id: Identity): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: id.authorName,
    GIT_AUTHOR_EMAIL: id.authorEmail,
    GIT_COMMITTER_NAME: id.committerName,
    GIT_COMMITTER_EMAIL: id.committerEmail,
  };
}
