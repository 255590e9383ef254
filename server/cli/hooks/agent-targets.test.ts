import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../../test-support/temp-repo.ts';
import { hooksCommand } from '../hooks.ts';

const cleanups: (() => unknown)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function folders() {
  const root = createTempDir('rundiff-hooks-agents-');
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const home = path.join(root, 'home');
  const ws = path.join(root, 'project');
  fs.mkdirSync(home);
  fs.mkdirSync(ws);
  return { home, ws };
}

async function cli(argv: string[], f: { home: string; ws: string }) {
  const lines: string[] = [];
  const code = await hooksCommand(argv, {
    env: { HOME: f.home },
    cwd: f.ws,
    out: (l) => lines.push(l),
    hookScript: '/opt/rundiff/bin/rundiff-hook.js',
  });
  return { code, lines };
}

const read = (file: string) => fs.readFileSync(file, 'utf8');
const command = (agent: string) =>
  `'${process.execPath}' '/opt/rundiff/bin/rundiff-hook.js' ${agent} --server 'http://127.0.0.1:7420'`;

function writeFile(file: string, text: string) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

describe('rundiff hooks install gemini', () => {
  const THEIRS = `{
  "security": { "folderTrust": { "enabled": true } },
  "hooks": {
    "BeforeTool": [{ "matcher": "write_file", "hooks": [{ "type": "command", "command": "./lint.sh" }] }]
  }
}
`;
  it('merges command hooks into the project .gemini/settings.json, once, and uninstall gives back the same bytes', async () => {
    const f = folders();
    const file = path.join(f.ws, '.gemini', 'settings.json');
    writeFile(file, THEIRS);
    const out = await cli(['install', 'gemini'], f);
    expect(out.code).toBe(0);
    expect(out.lines[0]).toContain(`added to ${file}`);
    const s = JSON.parse(read(file));
    expect(s.security).toEqual({ folderTrust: { enabled: true } });
    expect(Object.keys(s.hooks).sort()).toEqual(
      ['AfterAgent', 'AfterTool', 'BeforeAgent', 'BeforeTool', 'SessionEnd', 'SessionStart'].sort(),
    );
    expect(s.hooks.BeforeTool).toEqual([
      { matcher: 'write_file', hooks: [{ type: 'command', command: './lint.sh' }] },
      { matcher: '*', hooks: [{ type: 'command', command: command('gemini') }] },
    ]);
    expect(s.hooks.BeforeAgent).toEqual([{ hooks: [{ type: 'command', command: command('gemini') }] }]);
    const once = read(file);
    expect((await cli(['install', 'gemini'], f)).lines[0]).toContain('already installed');
    expect(read(file)).toBe(once);
    const un = await cli(['uninstall', 'gemini'], f);
    expect(un.lines[0]).toMatch(/removed 6 rundiff hooks/);
    expect(read(file)).toBe(THEIRS);
  });

  it('--user writes ~/.gemini/settings.json, and uninstall removes the file it created', async () => {
    const f = folders();
    const file = path.join(f.home, '.gemini', 'settings.json');
    await cli(['install', 'gemini', '--user'], f);
    expect(JSON.parse(read(file)).hooks.AfterAgent).toHaveLength(1);
    expect(fs.existsSync(path.join(f.ws, '.gemini'))).toBe(false);
    await cli(['uninstall', 'gemini', '--user'], f);
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe('rundiff hooks install cursor', () => {
  const THEIRS = `{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{ "command": "./format.sh" }],
    "beforeReadFile": [{ "command": "./redact.sh" }]
  }
}
`;
  it('adds one handler per event to .cursor/hooks.json in the version 1 format, keeps the others, once, and removes exactly its own', async () => {
    const f = folders();
    const file = path.join(f.ws, '.cursor', 'hooks.json');
    writeFile(file, THEIRS);
    await cli(['install', 'cursor'], f);
    await cli(['install', 'cursor'], f);
    const s = JSON.parse(read(file));
    expect(s.version).toBe(1);
    expect(s.hooks.afterFileEdit).toEqual([{ command: './format.sh' }, { command: command('cursor') }]);
    expect(s.hooks.beforeReadFile).toEqual([{ command: './redact.sh' }]);
    expect(s.hooks.beforeSubmitPrompt).toEqual([{ command: command('cursor') }]);
    expect(s.hooks.stop).toEqual([{ command: command('cursor') }]);
    const un = await cli(['uninstall', 'cursor'], f);
    expect(un.lines[0]).toMatch(/removed 10 rundiff hooks/);
    expect(read(file)).toBe(THEIRS);
  });

  it('a hooks.json rundiff created (version and hooks) is removed whole by uninstall', async () => {
    const f = folders();
    const file = path.join(f.home, '.cursor', 'hooks.json');
    await cli(['install', 'cursor', '--user'], f);
    expect(JSON.parse(read(file))).toMatchObject({ version: 1 });
    await cli(['uninstall', 'cursor', '--user'], f);
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe('rundiff hooks install copilot', () => {
  it('writes its own .github/hooks/rundiff.json with bash command hooks, leaves other hook files alone, and removes it', async () => {
    const f = folders();
    const other = path.join(f.ws, '.github', 'hooks', 'policy.json');
    const theirs = '{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"./deny.sh"}]}}';
    writeFile(other, theirs);
    const file = path.join(f.ws, '.github', 'hooks', 'rundiff.json');
    await cli(['install', 'copilot'], f);
    const s = JSON.parse(read(file));
    expect(s.version).toBe(1);
    expect(Object.keys(s.hooks)).toEqual([
      'sessionStart',
      'userPromptSubmitted',
      'preToolUse',
      'postToolUse',
      'postToolUseFailure',
      'agentStop',
      'sessionEnd',
      'errorOccurred',
    ]);
    expect(s.hooks.preToolUse).toEqual([{ type: 'command', bash: command('copilot'), timeoutSec: 30 }]);
    const once = read(file);
    await cli(['install', 'copilot'], f);
    expect(read(file)).toBe(once);
    // --user says why it goes to the project
    expect((await cli(['install', 'copilot', '--user'], f)).lines.join('\n')).toContain('.github/hooks');
    await cli(['uninstall', 'copilot'], f);
    expect(fs.existsSync(file)).toBe(false);
    expect(read(other)).toBe(theirs);
  });
});
