import { execFileSync } from 'node:child_process';
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
  const root = createTempDir('rundiff-hooks-files-');
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const home = path.join(root, 'home');
  const ws = path.join(root, 'project');
  fs.mkdirSync(home);
  fs.mkdirSync(ws);
  return { home, ws, root };
}

async function cli(argv: string[], f: { home: string; ws: string }, hookScript = '/opt/rundiff/bin/rundiff-hook.js') {
  const lines: string[] = [];
  const code = await hooksCommand(argv, { env: { HOME: f.home }, cwd: f.ws, out: (l) => lines.push(l), hookScript });
  return { code, lines };
}

const read = (file: string) => fs.readFileSync(file, 'utf8');
const tree = (dir: string): string[] =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((d) => d.isFile())
        .map((d) => path.relative(dir, path.join(d.parentPath, d.name)))
        .sort()
    : [];

describe('rundiff hooks install opencode', () => {
  it("names the plugin in the project's opencode.json, once, writes nothing into .opencode/, and uninstall gives the file back", async () => {
    const f = folders();
    const file = path.join(f.ws, 'opencode.json');
    const mine = '{\n  // my model\n  "model": "x/y"\n}\n';
    fs.writeFileSync(file, mine);
    const out = await cli(['install', 'opencode'], f);
    expect(out.code).toBe(0);
    expect(out.lines[0]).toBe(`opencode: added to ${file}: hooks post to http://127.0.0.1:7420/api/hooks/opencode`);
    const once = read(file);
    // opencode reads the file with comments: they are kept
    expect(once).toContain('// my model');
    expect(once).toContain('file:///opt/rundiff/bin/rundiff-opencode.js');
    expect((await cli(['install', 'opencode'], f)).lines[0]).toContain('already installed');
    expect(read(file)).toBe(once);
    expect(fs.existsSync(path.join(f.ws, '.opencode'))).toBe(false);
    const status = await cli(['status'], f);
    expect(status.lines.some((l) => /^opencode +project +installed/.test(l))).toBe(true);
    await cli(['uninstall', 'opencode'], f);
    expect(read(file)).toBe(mine);
  });

  it('uses opencode.jsonc when only that one is there, and --user the one in ~/.config/opencode', async () => {
    const f = folders();
    fs.writeFileSync(path.join(f.ws, 'opencode.jsonc'), '{}\n');
    expect((await cli(['install', 'opencode'], f)).code).toBe(0);
    expect(fs.existsSync(path.join(f.ws, 'opencode.json'))).toBe(false);
    expect(read(path.join(f.ws, 'opencode.jsonc'))).toContain('rundiff-opencode.js');
    expect((await cli(['install', 'opencode', '--user'], f)).code).toBe(0);
    expect(read(path.join(f.home, '.config', 'opencode', 'opencode.json'))).toContain('rundiff-opencode.js');
    await cli(['uninstall', 'opencode', '--user'], f);
    expect(fs.existsSync(path.join(f.home, '.config'))).toBe(false);
  });
});

describe('rundiff hooks install cline', () => {
  it('writes one executable per event in ~/.cline/hooks that runs the hook client and answers JSON, once, and removes exactly those', async () => {
    const f = folders();
    const dir = path.join(f.home, '.cline', 'hooks');
    fs.mkdirSync(dir, { recursive: true });
    // the person's own hook for one event, and an unrelated file
    fs.writeFileSync(path.join(dir, 'PostToolUse.py'), '#!/usr/bin/env python3\nprint("{}")\n');
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine\n');
    // a stand-in hook client that records the payload it was given (the real one posts it)
    const seen = path.join(f.home, 'seen.json');
    const client = path.join(f.home, 'client.js');
    fs.writeFileSync(client, `require('fs').writeFileSync(${JSON.stringify(seen)}, require('fs').readFileSync(0));\n`);
    const out = await cli(['install', 'cline'], f, client);
    expect(out.lines[0]).toContain(
      `wrote TaskStart, TaskResume, UserPromptSubmit, PreToolUse, TaskComplete, TaskCancel in ${dir}`,
    );
    expect(out.lines.join('\n')).toContain('left PostToolUse to your own hook (PostToolUse.py)');
    expect(tree(dir)).toEqual(
      [
        'PostToolUse.py',
        'PreToolUse',
        'TaskCancel',
        'TaskComplete',
        'TaskResume',
        'TaskStart',
        'UserPromptSubmit',
        'notes.txt',
      ].sort(),
    );
    expect(fs.statSync(path.join(dir, 'PreToolUse')).mode & 0o777).toBe(0o755);
    // the executable as Cline runs it: the payload on stdin reaches the client, JSON comes back on stdout
    const payload = JSON.stringify({
      hookName: 'tool_call',
      taskId: 't1',
      tool_call: { id: 'c', name: 'editor', input: {} },
    });
    const stdout = execFileSync(path.join(dir, 'PreToolUse'), { input: payload, encoding: 'utf8' });
    expect(JSON.parse(stdout)).toEqual({ cancel: false });
    expect(read(seen)).toBe(payload);

    expect((await cli(['install', 'cline'], f, client)).lines[0]).toContain('already installed');
    const un = await cli(['uninstall', 'cline'], f);
    expect(un.lines[0]).toContain(
      'removed TaskStart, TaskResume, UserPromptSubmit, PreToolUse, TaskComplete, TaskCancel',
    );
    expect(tree(dir)).toEqual(['PostToolUse.py', 'notes.txt']);
  });
});

describe('rundiff hooks install hermes', () => {
  const THEIRS = `# my hermes config
model:
  default: anthropic/claude-sonnet-4.6  # the usual
terminal:
  backend: local
`;
  it('appends a marked hooks: block to ~/.hermes/config.yaml, keeps the rest and its comments, once, and uninstall gives back the same bytes', async () => {
    const f = folders();
    const file = path.join(f.home, '.hermes', 'config.yaml');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, THEIRS);
    const out = await cli(['install', 'hermes'], f);
    expect(out.code).toBe(0);
    expect(out.lines.join('\n')).toContain('--accept-hooks');
    const text = read(file);
    expect(text.startsWith(THEIRS)).toBe(true);
    const command = `"'${process.execPath}' '/opt/rundiff/bin/rundiff-hook.js' hermes --server 'http://127.0.0.1:7420'"`;
    expect(text.slice(THEIRS.length).split('\n').slice(1, 5)).toEqual([
      'hooks:',
      '  on_session_start:',
      `    - command: ${command}`,
      '  pre_llm_call:',
    ]);
    expect((await cli(['install', 'hermes'], f)).lines[0]).toContain('already installed');
    expect(read(file)).toBe(text);
    await cli(['uninstall', 'hermes'], f);
    expect(read(file)).toBe(THEIRS);
  });

  it('a config without a final newline, or none at all, comes back exactly', async () => {
    const f = folders();
    const file = path.join(f.home, '.hermes', 'config.yaml');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, 'model: x');
    await cli(['install', 'hermes'], f);
    await cli(['uninstall', 'hermes'], f);
    expect(read(file)).toBe('model: x');
    fs.rmSync(file);
    await cli(['install', 'hermes'], f);
    expect(read(file).startsWith('# >>> rundiff hooks')).toBe(true);
    await cli(['uninstall', 'hermes'], f);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('a config with its own hooks: block is refused and left untouched', async () => {
    const f = folders();
    const file = path.join(f.home, '.hermes', 'config.yaml');
    fs.mkdirSync(path.dirname(file));
    const mine = 'hooks:\n  post_tool_call:\n    - command: ~/.hermes/agent-hooks/format.sh\n';
    fs.writeFileSync(file, mine);
    await expect(cli(['install', 'hermes'], f)).rejects.toThrow(/already has a hooks: block/);
    expect(read(file)).toBe(mine);
  });
});

describe('the hooks command as the rundiff binary runs it', () => {
  it('status lists all eight agents when started through bin/rundiff.js (its loader, not the test runner)', () => {
    const f = folders();
    const bin = new URL('../../../bin/rundiff.js', import.meta.url).pathname;
    const out = execFileSync(process.execPath, [bin, 'hooks', 'status', '--server', 'http://127.0.0.1:9'], {
      cwd: f.ws,
      env: { ...process.env, HOME: f.home },
      encoding: 'utf8',
    });
    const agents = new Set(
      out.split('\n').flatMap((l) => (/^[a-z-]+ +(project|user) /.test(l) ? [l.split(' ')[0]] : [])),
    );
    expect([...agents].sort()).toEqual([
      'claude-code',
      'cline',
      'codex',
      'copilot',
      'cursor',
      'gemini',
      'hermes',
      'opencode',
    ]);
  });
});
