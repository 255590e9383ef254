import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { cleanServerEnv, freePort } from './test-servers.ts';
import { expect, test } from './support.ts';

/**
 * The packed tarball, installed into a temporary prefix and run from there: no sources, no
 * TypeScript loader, the web UI built in. `npm test` builds the UI before the browser specs; the
 * server is compiled here (`npm run build:server`) and packed with `--ignore-scripts` so the UI is
 * not built twice. The install takes its dependencies from npm's cache where it can and runs no
 * install scripts; better-sqlite3's native part is then copied from this checkout's (same version,
 * same machine), since building it again offline takes minutes.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

let tmp = '';
let installed = '';
let bin = '';
const children: ChildProcess[] = [];

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  test.setTimeout(600_000);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-package-'));
  const npm = (args: string[], cwd = ROOT) =>
    execFileSync('npm', args, {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
  // Without type checking (the same JavaScript): `npm test` type-checks the sources before.
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-server.js'), '--no-check'], {
    cwd: ROOT,
    stdio: 'ignore',
  });
  expect(fs.existsSync(path.join(ROOT, 'dist/web/index.html')), 'the web UI is built before the browser specs').toBe(
    true,
  );
  const packed = JSON.parse(npm(['pack', '--ignore-scripts', '--json', '--pack-destination', tmp])) as {
    filename: string;
    files: { path: string }[];
  }[];
  const files = packed[0]!.files.map((f) => f.path);
  // What the package ships: the compiled code, the built UI, the migrations, no TypeScript sources.
  expect(files).toContain('dist/server/cli/index.js');
  expect(files).toContain('dist/web/index.html');
  expect(files).toContain('migrations/0001_init.sql');
  expect(files.filter((f) => f.endsWith('.ts'))).toEqual([]);
  const prefix = path.join(tmp, 'prefix');
  npm(
    [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--prefer-offline',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      path.join(tmp, packed[0]!.filename),
    ],
    tmp,
  );
  installed = path.join(prefix, 'lib', 'node_modules', PKG.name);
  fs.cpSync(
    path.join(ROOT, 'node_modules/better-sqlite3/build'),
    path.join(installed, 'node_modules/better-sqlite3/build'),
    {
      recursive: true,
    },
  );
  bin = path.join(prefix, 'bin', 'rundiff');
});

test.afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** The installed command, run from a folder outside the checkout with a home of its own. */
function env(): NodeJS.ProcessEnv {
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home, { recursive: true });
  return { ...process.env, ...cleanServerEnv, HOME: home, XDG_DATA_HOME: path.join(home, 'data') };
}

test('the installed rundiff answers --version from any folder without the checkout', () => {
  const out = execFileSync(bin, ['--version'], { cwd: tmp, env: env(), encoding: 'utf8' });
  expect(out.trim()).toBe(PKG.version);
  expect(fs.realpathSync(bin).startsWith(installed)).toBe(true);
});

test('the installed rundiff serves the built web UI and records a run', async ({ page }) => {
  const port = freePort();
  const server = spawn(bin, ['serve', '--port', port], { cwd: tmp, env: env(), stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(server);
  const base = `http://127.0.0.1:${port}`;
  await expect
    .poll(async () => (await fetch(`${base}/api/health`).catch(() => null))?.status ?? 0, { timeout: 30_000 })
    .toBe(200);
  const post = (event: object) =>
    fetch(`${base}/api/bridge/events`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(event),
    });
  const ws = fs.mkdtempSync(path.join(tmp, 'ws-'));
  fs.writeFileSync(path.join(ws, 'a.txt'), 'one\n');
  expect(
    (await post({ type: 'session.upsert', session_id: 'pkg-1', title: 'From the package', workspace: ws })).status,
  ).toBe(200);
  expect((await post({ type: 'run.started', session_id: 'pkg-1', run_id: 'r1' })).status).toBe(200);
  fs.writeFileSync(path.join(ws, 'a.txt'), 'two\n');
  expect((await post({ type: 'run.completed', session_id: 'pkg-1', run_id: 'r1' })).status).toBe(200);
  await page.goto(base);
  await expect(page.getByTestId('session-link').filter({ hasText: 'From the package' })).toBeVisible();
  await page.getByTestId('session-link').filter({ hasText: 'From the package' }).click();
  await expect(page.getByText('a.txt').first()).toBeVisible();
  server.kill('SIGTERM');
});

test('hooks install from the installed package names the installed hook client', () => {
  const ws = fs.mkdtempSync(path.join(tmp, 'hooks-'));
  execFileSync(bin, ['hooks', 'install', 'claude-code'], { cwd: ws, env: env(), encoding: 'utf8' });
  const settings = JSON.parse(fs.readFileSync(path.join(ws, '.claude', 'settings.json'), 'utf8')) as {
    hooks: { SessionStart: { hooks: { command: string }[] }[] };
  };
  const command = settings.hooks.SessionStart[0]!.hooks[0]!.command;
  expect(command).toContain(path.join(installed, 'bin', 'rundiff-hook.js'));
  expect(command).not.toContain(ROOT);
});

test('rundiff mcp from the installed package answers initialize and lists its tools', async () => {
  const repo = fs.mkdtempSync(path.join(tmp, 'repo-'));
  execFileSync('git', ['init', '-q', repo]);
  const mcp = spawn(bin, ['mcp', '--workspace', repo], { cwd: repo, env: env(), stdio: ['pipe', 'pipe', 'ignore'] });
  children.push(mcp);
  const answers = createInterface({ input: mcp.stdout });
  type Answer = { id?: number; result?: { tools?: { name: string }[]; serverInfo?: { name: string } } };
  const waiting = new Map<number, (v: Answer) => void>();
  answers.on('line', (line) => {
    const msg = JSON.parse(line) as Answer;
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg);
  });
  const call = (id: number, method: string, params: object = {}) =>
    new Promise<Answer>((resolve) => {
      waiting.set(id, resolve);
      mcp.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const init = await call(1, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'package-test', version: '1' },
  });
  expect(init.result?.serverInfo?.name).toContain('rundiff');
  mcp.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  const tools = await call(2, 'tools/list');
  expect(tools.result?.tools?.map((t) => t.name)).toEqual(
    expect.arrayContaining(['git_status', 'git_diff', 'git_commit']),
  );
  mcp.kill('SIGTERM');
});
