import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../test-support/temp-repo.ts';
import { startTestServer } from '../test-support/server-harness.ts';
import { createFolderLedger } from './hooks/created-folders.ts';
import { hooksCommand } from './hooks.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function folders() {
  const root = createTempDir('rundiff-hooks-cli-');
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const home = path.join(root, 'home');
  const ws = path.join(root, 'project');
  fs.mkdirSync(home);
  fs.mkdirSync(ws);
  return { home, ws };
}

async function cli(argv: string[], f: { home: string; ws: string }, env: Record<string, string> = {}) {
  const lines: string[] = [];
  const code = await hooksCommand(argv, {
    env: { HOME: f.home, ...env },
    cwd: f.ws,
    out: (l) => lines.push(l),
    hookScript: '/opt/rundiff/bin/rundiff-hook.js',
  });
  return { code, lines };
}

const read = (file: string) => fs.readFileSync(file, 'utf8');
const json = (file: string) => JSON.parse(read(file));

/** A project settings file with the person's own hooks and settings, in their own style. */
const THEIRS = `{
    "permissions": {
        "allow": ["Bash(npm test)"]
    },
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "command": "./check.sh"
                    }
                ]
            }
        ]
    },
    "unknownKey": {"kept": true}
}
`;

describe('rundiff hooks install claude-code', () => {
  it('creates the project settings with http hooks for every event, and uninstall removes the file it created', async () => {
    const f = folders();
    const file = path.join(f.ws, '.claude', 'settings.json');
    const out = await cli(['install', 'claude-code', '--server', 'http://127.0.0.1:7555'], f);
    expect(out.code).toBe(0);
    expect(out.lines[0]).toContain(`created ${file}`);
    const s = json(file);
    expect(Object.keys(s.hooks).sort()).toEqual(
      [
        'PostToolUse',
        'PostToolUseFailure',
        'PreToolUse',
        'SessionStart',
        'Stop',
        'StopFailure',
        'UserPromptSubmit',
      ].sort(),
    );
    expect(s.hooks.PreToolUse).toEqual([
      { matcher: '*', hooks: [{ type: 'http', url: 'http://127.0.0.1:7555/api/hooks/claude-code', timeout: 30 }] },
    ]);
    expect(s.hooks.UserPromptSubmit[0]).not.toHaveProperty('matcher');
    // SessionStart runs the hook client, which can start a server; http hooks cannot.
    expect(s.hooks.SessionStart[0].hooks[0]).toEqual({
      type: 'command',
      command: `'${process.execPath}' '/opt/rundiff/bin/rundiff-hook.js' claude-code --server 'http://127.0.0.1:7555'`,
      timeout: 30,
    });
    const un = await cli(['uninstall', 'claude-code'], f);
    expect(un.lines[0]).toContain(`removed ${file}`);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('merges into existing settings keeping other hooks and keys, twice leaves one set, and uninstall gives back the same bytes', async () => {
    const f = folders();
    const file = path.join(f.ws, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, THEIRS);
    await cli(['install', 'claude-code'], f);
    const once = read(file);
    const s = JSON.parse(once);
    expect(s.permissions).toEqual({ allow: ['Bash(npm test)'] });
    expect(s.unknownKey).toEqual({ kept: true });
    expect(s.hooks.PreToolUse[0]).toEqual({ matcher: 'Bash', hooks: [{ type: 'command', command: './check.sh' }] });
    expect(s.hooks.PreToolUse[1].hooks[0].url).toBe('http://127.0.0.1:7420/api/hooks/claude-code');
    expect(once).toMatch(/^ {4}"permissions"/m); // the file's own indentation

    const twice = await cli(['install', 'claude-code'], f);
    expect(twice.lines[0]).toContain('already installed');
    expect(read(file)).toBe(once);
    // A new server URL replaces rundiff's hooks rather than adding a second set.
    await cli(['install', 'claude-code', '--server', 'http://127.0.0.1:9999'], f);
    const moved = json(file);
    expect(moved.hooks.PreToolUse).toHaveLength(2);
    expect(moved.hooks.PreToolUse[1].hooks[0].url).toBe('http://127.0.0.1:9999/api/hooks/claude-code');

    const un = await cli(['uninstall', 'claude-code'], f);
    expect(un.lines[0]).toMatch(/removed 7 rundiff hooks/);
    expect(read(file)).toBe(THEIRS);
  });

  it('a file edited between install and uninstall keeps the edit (the saved original is not written over it)', async () => {
    const f = folders();
    const file = path.join(f.ws, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, THEIRS);
    await cli(['install', 'claude-code'], f);
    const edited = json(file);
    edited.model = 'opus';
    fs.writeFileSync(file, JSON.stringify(edited, null, 4));
    await cli(['uninstall', 'claude-code'], f);
    const after = json(file);
    expect(after.model).toBe('opus');
    expect(after.hooks).toEqual(JSON.parse(THEIRS).hooks);
  });

  it('an empty settings file of the person is kept, not removed', async () => {
    const f = folders();
    const file = path.join(f.ws, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, '{}');
    await cli(['install', 'claude-code'], f);
    await cli(['uninstall', 'claude-code'], f);
    expect(read(file)).toBe('{}');
  });

  it('with RUNDIFF_TOKEN set, the hooks send it through the header variable Claude Code fills in', async () => {
    const f = folders();
    await cli(['install', 'claude-code', '--no-autostart'], f, { RUNDIFF_TOKEN: 'tok' });
    const s = json(path.join(f.ws, '.claude', 'settings.json'));
    const h = s.hooks.Stop[0].hooks[0];
    expect(h.headers).toEqual({ Authorization: 'Bearer $RUNDIFF_TOKEN' });
    expect(h.allowedEnvVars).toEqual(['RUNDIFF_TOKEN']);
    expect(JSON.stringify(s)).not.toContain('tok"');
    // Without autostart, SessionStart is an http hook like the others.
    expect(s.hooks.SessionStart[0].hooks[0].type).toBe('http');
  });

  it('--user writes ~/.claude/settings.json and leaves the project alone', async () => {
    const f = folders();
    await cli(['install', 'claude-code', '--user'], f);
    expect(fs.existsSync(path.join(f.home, '.claude', 'settings.json'))).toBe(true);
    expect(fs.existsSync(path.join(f.ws, '.claude'))).toBe(false);
  });

  it('a settings file that is not JSON is refused and left untouched', async () => {
    const f = folders();
    const file = path.join(f.ws, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, '{ "hooks": ');
    await expect(cli(['install', 'claude-code'], f)).rejects.toThrow(/not valid JSON/);
    expect(read(file)).toBe('{ "hooks": ');
  });
});

describe('rundiff hooks install codex', () => {
  it("installs command hooks running the hook client in the user's ~/.codex/hooks.json and says why it is not the project", async () => {
    const f = folders();
    const out = await cli(['install', 'codex', '--server', 'http://127.0.0.1:7555'], f);
    const file = path.join(f.home, '.codex', 'hooks.json');
    const s = json(file);
    expect(Object.keys(s.hooks)).toEqual(['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']);
    expect(s.hooks.PreToolUse[0]).toEqual({
      matcher: '*',
      hooks: [
        {
          type: 'command',
          command: `'${process.execPath}' '/opt/rundiff/bin/rundiff-hook.js' codex --server 'http://127.0.0.1:7555'`,
        },
      ],
    });
    expect(out.lines.join('\n')).toMatch(/~\/\.codex\/hooks\.json only/);
    expect(fs.existsSync(path.join(f.ws, '.codex'))).toBe(false);
    await cli(['uninstall', 'codex'], f);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('keeps a hook of the person that also mentions the agent, and removes only the one it added', async () => {
    const f = folders();
    const file = path.join(f.home, '.codex', 'hooks.json');
    fs.mkdirSync(path.dirname(file));
    const original = `${JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify codex done' }] }] } }, null, 2)}\n`;
    fs.writeFileSync(file, original);
    await cli(['install', 'codex', '--no-autostart'], f);
    expect(json(file).hooks.Stop[1].hooks[0].command).toMatch(/ codex --server .* --no-autostart$/);
    await cli(['uninstall', 'codex'], f);
    expect(read(file)).toBe(original);
  });
});

describe('rundiff hooks status', () => {
  it('lists each agent as installed or not, per scope, and whether a server answers', async () => {
    const f = folders();
    const t = await startTestServer();
    cleanups.push(() => t.close());
    await cli(['install', 'claude-code', '--server', t.server.url], f);
    const up = await cli(['status', '--server', t.server.url], f);
    expect(up.lines[0]).toBe(`server ${t.server.url}: answering`);
    const row = (agent: string, scope: string) =>
      up.lines.find((l) => l.startsWith(agent) && l.split(/\s+/)[1] === scope) ?? '';
    expect(row('claude-code', 'project')).toMatch(/ installed /);
    expect(row('claude-code', 'user')).toMatch(/not installed/);
    expect(row('codex', 'user')).toMatch(/not installed/);
    await t.close();
    const down = await cli(['status', '--server', t.server.url], f);
    expect(down.lines[0]).toMatch(/not answering/);
  });
});

describe('rundiff hooks status for Codex', () => {
  /** Codex's trust of one hook, as Codex 0.169.0 writes it to ~/.codex/config.toml. */
  const trustTable = (key: string) => `[hooks.state.${JSON.stringify(key)}]\ntrusted_hash = "sha256:ab12"\n`;
  const trustRow = (lines: string[]) => lines.find((l) => /^codex +trust /.test(l)) ?? '';

  it("reads Codex's trust of each of rundiff's hooks by Codex's key, a person's own hooks before them counted", async () => {
    const f = folders();
    const hooksFile = path.join(f.home, '.codex', 'hooks.json');
    fs.mkdirSync(path.dirname(hooksFile), { recursive: true });
    // The person's own Stop hook comes first: rundiff's Stop handler is Codex's group 1 of that event.
    fs.writeFileSync(
      hooksFile,
      JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }] } }),
    );
    const install = await cli(['install', 'codex'], f);
    expect(install.lines).toContainEqual(
      expect.stringMatching(/^codex: Codex runs new or changed hooks only once they are trusted/),
    );
    expect(trustRow((await cli(['status'], f)).lines)).toMatch(/NOT TRUSTED \(0 of 4 trusted\)/);

    const config = path.join(f.home, '.codex', 'config.toml');
    const keys = [
      `${hooksFile}:user_prompt_submit:0:0`,
      `${hooksFile}:pre_tool_use:0:0`,
      `${hooksFile}:post_tool_use:0:0`,
      `${hooksFile}:stop:1:0`,
    ];
    fs.writeFileSync(config, `model = "gpt-5.5"\n\n${keys.slice(0, 3).map(trustTable).join('\n')}`);
    expect(trustRow((await cli(['status'], f)).lines)).toMatch(/NOT TRUSTED \(3 of 4 trusted\)/);
    // The person's own hook trusted instead of rundiff's Stop: still 3 of 4.
    fs.appendFileSync(config, `\n${trustTable(`${hooksFile}:stop:0:0`)}`);
    expect(trustRow((await cli(['status'], f)).lines)).toMatch(/NOT TRUSTED \(3 of 4 trusted\)/);
    fs.appendFileSync(config, `\n${trustTable(keys[3]!)}`);
    expect(trustRow((await cli(['status'], f)).lines)).toMatch(/trusted in ~\/\.codex\/config\.toml/);
    // Installing again unchanged keeps Codex's trust, and install says it is trusted.
    const again = await cli(['install', 'codex'], f);
    expect(again.lines).toContainEqual(expect.stringMatching(/^codex: trusted in ~\/\.codex\/config\.toml/));
    // A hook turned off in Codex is said as such.
    fs.appendFileSync(config, `\n[hooks.state]\n${JSON.stringify(keys[1])}.enabled = false\n`);
    expect(trustRow((await cli(['status'], f)).lines)).toMatch(/1 of rundiff's 4 hooks are turned off in Codex/);
  });

  it('says nothing of trust where rundiff has no Codex hooks', async () => {
    const f = folders();
    expect(trustRow((await cli(['status'], f)).lines)).toBe('');
  });
});

describe('uninstall removes the folders install created', () => {
  const backupDir = (f: { home: string }) => path.join(f.home, '.local', 'share', 'rundiff', 'hooks-backup');

  it.each([
    ['claude-code', (f: { home: string; ws: string }) => [path.join(f.ws, '.claude')], []],
    ['gemini', (f: { home: string; ws: string }) => [path.join(f.ws, '.gemini')], []],
    ['codex', (f: { home: string; ws: string }) => [path.join(f.home, '.codex')], []],
    [
      'opencode',
      (f: { home: string; ws: string }) => [path.join(f.home, '.config', 'opencode'), path.join(f.home, '.config')],
      ['--user'],
    ],
    [
      'cline',
      (f: { home: string; ws: string }) => [path.join(f.home, '.cline', 'hooks'), path.join(f.home, '.cline')],
      [],
    ],
    [
      'copilot',
      (f: { home: string; ws: string }) => [path.join(f.ws, '.github', 'hooks'), path.join(f.ws, '.github')],
      [],
    ],
  ])('%s: the folders are gone after uninstall, as is the backup folder', async (agent, made, scope) => {
    const f = folders();
    expect((await cli(['install', agent, ...scope], f)).code).toBe(0);
    for (const folder of made(f)) expect(fs.statSync(folder).isDirectory()).toBe(true);
    const un = await cli(['uninstall', agent, ...scope], f);
    expect(un.code).toBe(0);
    for (const folder of made(f)) {
      expect(fs.existsSync(folder)).toBe(false);
      expect(un.lines).toContain(`${agent}: removed the empty folder ${folder}`);
    }
    expect(fs.existsSync(backupDir(f))).toBe(false);
  });

  it('a folder that was there before install stays, and so does one the person put a file in', async () => {
    const f = folders();
    fs.mkdirSync(path.join(f.ws, '.claude'));
    await cli(['install', 'claude-code'], f);
    await cli(['install', 'cline'], f);
    fs.writeFileSync(path.join(f.home, '.cline', 'config.json'), '{}\n');
    await cli(['uninstall', 'claude-code'], f);
    await cli(['uninstall', 'cline'], f);
    // .claude was the person's; .cline now holds their file; the empty hooks folder went.
    expect(fs.readdirSync(path.join(f.ws, '.claude'))).toEqual([]);
    expect(fs.readdirSync(path.join(f.home, '.cline'))).toEqual(['config.json']);
    // Forgotten once kept: emptying it later and uninstalling again leaves it to the person.
    fs.rmSync(path.join(f.home, '.cline', 'config.json'));
    await cli(['install', 'cline'], f);
    await cli(['uninstall', 'cline'], f);
    expect(fs.existsSync(path.join(f.home, '.cline'))).toBe(true);
    expect(fs.existsSync(path.join(f.home, '.cline', 'hooks'))).toBe(false);
  });

  it('a recorded folder that became a symbolic link is not followed: its target stays', () => {
    const f = folders();
    const ledger = createFolderLedger(path.join(f.home, 'data'));
    const made = ledger.missing({ root: f.ws, file: path.join(f.ws, '.claude', 'settings.json') });
    fs.mkdirSync(path.join(f.ws, '.claude'));
    ledger.record('claude-code', made);
    const elsewhere = path.join(path.dirname(f.ws), 'elsewhere');
    fs.mkdirSync(path.join(elsewhere, 'inner'), { recursive: true });
    fs.rmdirSync(path.join(f.ws, '.claude'));
    fs.symlinkSync(path.join(elsewhere, 'inner'), path.join(f.ws, '.claude'));
    expect(ledger.sweep('claude-code')).toEqual([]);
    expect(fs.existsSync(path.join(elsewhere, 'inner'))).toBe(true);
    expect(fs.lstatSync(path.join(f.ws, '.claude')).isSymbolicLink()).toBe(true);
    // Control: the same folder, still a folder, goes.
    fs.rmSync(path.join(f.ws, '.claude'));
    fs.mkdirSync(path.join(f.ws, '.claude'));
    ledger.record('claude-code', made);
    expect(ledger.sweep('claude-code')).toEqual([path.join(f.ws, '.claude')]);
  });
});

describe('rundiff hooks install gemini: settings with comments', () => {
  /** Gemini CLI's own settings, with comments as its docs show them. */
  const COMMENTED = `{
  // Gemini CLI settings of the person
  "theme": "GitHub", /* kept */
  "hooks": {
    "BeforeTool": [
      // their own check
      { "matcher": "run_shell_command", "hooks": [{ "type": "command", "command": "./check.sh" }] }
    ]
  }
}
`;
  /** What Gemini CLI does with the file: comments stripped, the rest read as JSON. */
  const asGeminiReadsIt = (text: string) =>
    JSON.parse(text.replace(/("(?:[^"\\]|\\.)*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (_m, str?: string) => str ?? ''));

  it("installs into the person's commented file keeping every comment and their own hook byte for byte", async () => {
    const f = folders();
    const file = path.join(f.ws, '.gemini', 'settings.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, COMMENTED);
    const out = await cli(['install', 'gemini'], f);
    expect(out.code).toBe(0);
    const text = read(file);
    expect(text).toContain('// Gemini CLI settings of the person');
    expect(text).toContain('"theme": "GitHub", /* kept */');
    expect(text).toContain(
      `// their own check\n      { "matcher": "run_shell_command", "hooks": [{ "type": "command", "command": "./check.sh" }] }`,
    );
    const s = asGeminiReadsIt(text);
    expect(s.theme).toBe('GitHub');
    expect(s.hooks.BeforeTool).toHaveLength(2);
    expect(s.hooks.BeforeTool[1].hooks[0].command).toContain('rundiff-hook.js');
    expect(Object.keys(s.hooks).sort()).toEqual(
      ['AfterAgent', 'AfterTool', 'BeforeAgent', 'BeforeTool', 'SessionEnd', 'SessionStart'].sort(),
    );
    expect((await cli(['status'], f)).lines.find((l) => l.startsWith('gemini') && l.includes('project'))).toContain(
      ' installed',
    );
    // Twice is one set; uninstall gives back the same bytes.
    await cli(['install', 'gemini'], f);
    expect(read(file)).toBe(text);
    await cli(['uninstall', 'gemini'], f);
    expect(read(file)).toBe(COMMENTED);
  });

  it('a file edited between install and uninstall keeps its edit and its comments', async () => {
    const f = folders();
    const file = path.join(f.ws, '.gemini', 'settings.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, COMMENTED);
    await cli(['install', 'gemini'], f);
    fs.writeFileSync(file, read(file).replace('"theme": "GitHub"', '"theme": "Dracula"'));
    const un = await cli(['uninstall', 'gemini'], f);
    expect(un.lines[0]).toContain('removed 6 rundiff hooks');
    const text = read(file);
    expect(text).toContain('// Gemini CLI settings of the person');
    expect(text).toContain('// their own check');
    expect(text).not.toContain('rundiff-hook.js');
    expect(asGeminiReadsIt(text)).toEqual({
      theme: 'Dracula',
      hooks: {
        BeforeTool: [{ matcher: 'run_shell_command', hooks: [{ type: 'command', command: './check.sh' }] }],
      },
    });
  });

  it('a trailing comma, which Gemini CLI cannot read either, is refused and left untouched', async () => {
    const f = folders();
    const file = path.join(f.ws, '.gemini', 'settings.json');
    fs.mkdirSync(path.dirname(file));
    const bad = '{\n  // note\n  "theme": "GitHub",\n}\n';
    fs.writeFileSync(file, bad);
    await expect(cli(['install', 'gemini'], f)).rejects.toThrow(/not valid JSON with comments .* at line 4/);
    expect(read(file)).toBe(bad);
  });

  it("Claude Code's settings, which it reads as plain JSON, are still refused with a comment", async () => {
    const f = folders();
    const file = path.join(f.ws, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, '{\n  // note\n  "a": 1\n}\n');
    await expect(cli(['install', 'claude-code'], f)).rejects.toThrow(/is not valid JSON/);
  });
});

describe("an earlier release's opencode plugin file", () => {
  const OLD_FIRST_LINE = '// rundiff hooks plugin for opencode (written by `rundiff hooks install opencode`)';

  it.each(['install', 'uninstall'])('%s removes it, and the plugin folders it leaves empty', async (action) => {
    const f = folders();
    const plugins = path.join(f.ws, '.opencode', 'plugins');
    fs.mkdirSync(plugins, { recursive: true });
    fs.writeFileSync(path.join(plugins, 'rundiff.js'), `${OLD_FIRST_LINE}\nexport const RundiffPlugin = 1;\n`);
    const r = await cli([action, 'opencode'], f);
    expect(r.code).toBe(0);
    expect(fs.existsSync(path.join(f.ws, '.opencode'))).toBe(false);
    expect(r.lines).toContain(`opencode: removed ${path.join(plugins, 'rundiff.js')} (an earlier rundiff's install)`);
    expect(r.lines).toContain(`opencode: removed the empty folder ${path.join(f.ws, '.opencode')}`);
  });

  it("leaves the person's own file of that name, and a plugin folder that holds anything else", async () => {
    const f = folders();
    const plugins = path.join(f.ws, '.opencode', 'plugins');
    fs.mkdirSync(plugins, { recursive: true });
    fs.writeFileSync(path.join(plugins, 'rundiff.js'), '// my own plugin\n');
    const user = path.join(f.home, '.config', 'opencode', 'plugins');
    fs.mkdirSync(user, { recursive: true });
    fs.writeFileSync(path.join(user, 'rundiff.js'), `${OLD_FIRST_LINE}\n`);
    fs.writeFileSync(path.join(user, 'mine.js'), '// mine\n');
    expect((await cli(['install', 'opencode'], f)).code).toBe(0);
    expect(read(path.join(plugins, 'rundiff.js'))).toBe('// my own plugin\n');
    expect((await cli(['install', 'opencode', '--user'], f)).code).toBe(0);
    expect(fs.existsSync(path.join(user, 'rundiff.js'))).toBe(false);
    expect(read(path.join(user, 'mine.js'))).toBe('// mine\n');
  });
});
