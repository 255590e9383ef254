import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../../test-support/temp-repo.ts';
import { RUNDIFF_BIN } from '../../test-support/cli-process.ts';

/**
 * `rundiff hooks install|uninstall|status` run through the real CLI inside a repository that may
 * hold anything: planted temp names, settings files and folders that are links out of it, FIFOs,
 * settings rundiff would have to drop. Nothing outside may change, nothing may hang, nothing of the
 * person's may be lost, and no temp file may be left behind.
 */

const cleanups: (() => unknown)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

const BIN = RUNDIFF_BIN;

interface Folders {
  home: string;
  ws: string;
  data: string;
  outside: string;
}

function folders(): Folders {
  const root = createTempDir('rundiff-hooks-hostile-');
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const f = {
    home: path.join(root, 'home'),
    ws: path.join(root, 'project'),
    data: path.join(root, 'data'),
    outside: path.join(root, 'outside'),
  };
  for (const d of Object.values(f)) fs.mkdirSync(d);
  return f;
}

function cli(args: string[], f: Folders, timeoutMs = 30_000) {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: f.home, XDG_DATA_HOME: f.data };
  delete env.RUNDIFF_TOKEN;
  delete env.RUNDIFF_DB;
  const started = Date.now();
  const r = spawnSync(
    process.execPath,
    [BIN, 'hooks', ...args, '--workspace', f.ws, '--server', 'http://127.0.0.1:9'],
    {
      cwd: f.ws,
      env,
      encoding: 'utf8',
      timeout: timeoutMs,
    },
  );
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - started };
}

/** Every file below `dir` with its kind, links as `-> target`, sorted. */
function tree(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .map((rel) => {
      const st = fs.lstatSync(path.join(dir, rel));
      return st.isSymbolicLink() ? `${rel} -> ${fs.readlinkSync(path.join(dir, rel))}` : rel;
    })
    .sort();
}

const backups = (f: Folders) => tree(path.join(f.data, 'rundiff', 'hooks-backup'));

const SECRET = '{"auths":{"registry.example":{"auth":"c2VjcmV0"}}}\n';

describe('a planted temp name', () => {
  it('H2: a settings temp name planted as a link for every pid cannot redirect install; the link target is untouched', () => {
    const f = folders();
    const dir = path.join(f.ws, '.claude');
    fs.mkdirSync(dir);
    const victim = path.join(f.outside, 'victim.txt');
    fs.writeFileSync(victim, 'do not touch\n');
    const pidMax = Number(fs.readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
    for (let pid = 1; pid <= Math.min(pidMax, 4_194_304); pid++)
      fs.symlinkSync(victim, path.join(dir, `settings.json.rundiff-${pid}.tmp`));
    const planted = fs.readdirSync(dir).length;

    const out = cli(['install', 'claude-code'], f);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(fs.readFileSync(victim, 'utf8')).toBe('do not touch\n');
    const file = path.join(dir, 'settings.json');
    expect(fs.lstatSync(file).isFile()).toBe(true);
    expect(Object.keys(JSON.parse(fs.readFileSync(file, 'utf8')).hooks)).toContain('PreToolUse');
    // Nothing but the settings file was added: the temp file of the write is gone.
    expect(fs.readdirSync(dir).length).toBe(planted + 1);
  });
});

describe('a settings file that is a symbolic link', () => {
  it('H2/M8: one leading out of the project is refused naming its target, which is neither read into a backup nor changed', () => {
    const f = folders();
    const target = path.join(f.outside, 'config.json');
    fs.writeFileSync(target, SECRET);
    fs.mkdirSync(path.join(f.ws, '.claude'));
    const link = path.join(f.ws, '.claude', 'settings.json');
    fs.symlinkSync(target, link);

    for (const action of ['install', 'uninstall']) {
      const out = cli([action, 'claude-code'], f);
      expect(out.code).toBe(1);
      expect(out.stderr).toContain(`${link} leads through a symbolic link to ${target}`);
    }
    expect(cli(['status'], f).stdout).toMatch(/claude-code +project +unreadable \(.*symbolic link to /);
    expect(fs.readFileSync(target, 'utf8')).toBe(SECRET);
    expect(fs.readlinkSync(link)).toBe(target);
    expect(backups(f)).toEqual([]);
    expect(tree(f.ws)).toEqual(['.claude', `.claude/settings.json -> ${target}`]);
  });

  it('M8: one that stays in the project is written through and kept a link; uninstall gives back its bytes (control)', () => {
    const f = folders();
    fs.mkdirSync(path.join(f.ws, 'config'));
    fs.mkdirSync(path.join(f.ws, '.claude'));
    const target = path.join(f.ws, 'config', 'claude.json');
    const theirs = '{\n    "permissions": {"allow": []}\n}\n';
    fs.writeFileSync(target, theirs);
    fs.chmodSync(target, 0o600);
    const link = path.join(f.ws, '.claude', 'settings.json');
    fs.symlinkSync('../config/claude.json', link);

    const out = cli(['install', 'claude-code'], f);
    expect(out.stderr).toBe('');
    expect(fs.readlinkSync(link)).toBe('../config/claude.json');
    const merged = JSON.parse(fs.readFileSync(target, 'utf8'));
    expect(merged.permissions).toEqual({ allow: [] });
    expect(Object.keys(merged.hooks)).toContain('Stop');
    expect(fs.statSync(target).mode & 0o777).toBe(0o600);
    expect(cli(['status'], f).stdout).toMatch(/claude-code +project +installed/);

    expect(cli(['uninstall', 'claude-code'], f).code).toBe(0);
    expect(fs.readlinkSync(link)).toBe('../config/claude.json');
    expect(fs.readFileSync(target, 'utf8')).toBe(theirs);
    expect(tree(path.join(f.ws, 'config'))).toEqual(['claude.json']);
  });

  it("M8: a user's dotfiles link inside the home folder is written through with --user, the link kept", () => {
    const f = folders();
    fs.mkdirSync(path.join(f.home, 'dotfiles'));
    fs.mkdirSync(path.join(f.home, '.claude'));
    const target = path.join(f.home, 'dotfiles', 'claude-settings.json');
    fs.writeFileSync(target, '{"model": "x"}\n');
    const link = path.join(f.home, '.claude', 'settings.json');
    fs.symlinkSync(target, link);

    expect(cli(['install', 'claude-code', '--user'], f).code).toBe(0);
    expect(fs.readlinkSync(link)).toBe(target);
    expect(JSON.parse(fs.readFileSync(target, 'utf8')).model).toBe('x');
    expect(cli(['uninstall', 'claude-code', '--user'], f).code).toBe(0);
    expect(fs.readFileSync(target, 'utf8')).toBe('{"model": "x"}\n');
  });
});

describe('a folder on the way that is a symbolic link out of its place', () => {
  /** Each agent and the folder a hostile repository (or a link in the home folder) could plant. */
  const cases: { agent: string; base: 'ws' | 'home'; folder: string }[] = [
    { agent: 'claude-code', base: 'ws', folder: '.claude' },
    { agent: 'gemini', base: 'ws', folder: '.gemini' },
    { agent: 'cursor', base: 'ws', folder: '.cursor' },
    { agent: 'copilot', base: 'ws', folder: '.github/hooks' },
    { agent: 'cline', base: 'home', folder: '.cline/hooks' },
    { agent: 'codex', base: 'home', folder: '.codex' },
    { agent: 'hermes', base: 'home', folder: '.hermes' },
  ];
  for (const c of cases) {
    it(`H2/M8: ${c.agent}: ${c.base === 'ws' ? 'the project' : 'the home folder'}'s ${c.folder} leading outside is refused, nothing written there`, () => {
      const f = folders();
      const at = path.join(c.base === 'ws' ? f.ws : f.home, c.folder);
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.symlinkSync(f.outside, at);
      const out = cli(['install', c.agent], f);
      expect(out.code).toBe(1);
      expect(out.stderr).toContain(`leads through a symbolic link to ${f.outside}/`);
      expect(tree(f.outside)).toEqual([]);

      // control: the same folder as a real one is installed into
      fs.rmSync(at);
      const ok = cli(['install', c.agent], f);
      expect(ok.stderr).toBe('');
      expect(ok.code).toBe(0);
      expect(tree(at).length).toBeGreaterThan(0);
    });
  }

  it('H2/M8: a backup folder leading out of the data folder is refused before the settings file is changed', () => {
    const f = folders();
    fs.mkdirSync(path.join(f.data, 'rundiff'));
    fs.symlinkSync(f.outside, path.join(f.data, 'rundiff', 'hooks-backup'));
    fs.mkdirSync(path.join(f.ws, '.claude'));
    const file = path.join(f.ws, '.claude', 'settings.json');
    fs.writeFileSync(file, '{"model": "x"}\n');
    const out = cli(['install', 'claude-code'], f);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`leads through a symbolic link to ${f.outside}/`);
    expect(tree(f.outside)).toEqual([]);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"model": "x"}\n');
  });
});

describe('what is not a settings file', () => {
  it('Low: a FIFO at .claude/settings.json makes install, uninstall and status return promptly; install says why', () => {
    const f = folders();
    fs.mkdirSync(path.join(f.ws, '.claude'));
    const fifo = path.join(f.ws, '.claude', 'settings.json');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const install = cli(['install', 'claude-code'], f, 15_000);
    expect(install.signal).toBeNull();
    expect(install.code).toBe(1);
    expect(install.stderr).toContain(`${fifo}: not a regular file`);
    expect(cli(['uninstall', 'claude-code'], f, 15_000).code).toBe(1);
    const status = cli(['status'], f, 15_000);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/claude-code +project +unreadable \(.*not a regular file/);
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    expect(tree(path.join(f.ws, '.claude'))).toEqual(['settings.json']);
  });

  it('Low: a "hooks" that is not an object, or an event that is not a list, is refused naming the file; nothing written, backed up or deleted', () => {
    const f = folders();
    fs.mkdirSync(path.join(f.ws, '.claude'));
    const file = path.join(f.ws, '.claude', 'settings.json');
    for (const [text, what] of [
      ['{"hooks": "mine", "model": "x"}\n', '"hooks" is not a JSON object'],
      ['{"hooks": {"PreToolUse": {"mine": true}}}\n', '"hooks.PreToolUse" is not a list'],
    ] as const) {
      fs.writeFileSync(file, text);
      for (const action of ['install', 'uninstall']) {
        const out = cli([action, 'claude-code'], f);
        expect(out.code).toBe(1);
        expect(out.stderr).toContain(`${file}: ${what}; left unchanged`);
        expect(fs.readFileSync(file, 'utf8')).toBe(text);
      }
      expect(backups(f)).toEqual([]);
    }
    // control: an object "hooks" of the person's is merged into and given back
    const theirs =
      '{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "./check.sh"}]}]}, "model": "x"}\n';
    fs.writeFileSync(file, theirs);
    expect(cli(['install', 'claude-code'], f).code).toBe(0);
    expect(cli(['uninstall', 'claude-code'], f).code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toBe(theirs);
  });
});

/** Whether this file system takes the immutable attribute (it stops a rename over the file, even for root). */
function immutable(file: string): boolean {
  return spawnSync('chattr', ['+i', file]).status === 0;
}

describe('a write that fails', () => {
  it('Low: an install whose rename is refused (an immutable settings file) fails, leaving no temp file and the file as it was', (ctx) => {
    const f = folders();
    const dir = path.join(f.ws, '.claude');
    fs.mkdirSync(dir);
    const file = path.join(dir, 'settings.json');
    fs.writeFileSync(file, '{"model": "x"}\n');
    if (!immutable(file)) ctx.skip();
    cleanups.push(() => spawnSync('chattr', ['-i', file]));
    const out = cli(['install', 'claude-code'], f);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(file);
    expect(fs.readdirSync(dir)).toEqual(['settings.json']);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"model": "x"}\n');

    // control: once the file can be replaced, the same install goes through
    spawnSync('chattr', ['-i', file]);
    expect(cli(['install', 'claude-code'], f).code).toBe(0);
    expect(fs.readdirSync(dir)).toEqual(['settings.json']);
  });
});
