import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer } from '../test-support/server-harness.ts';
import { createRundiff } from '../index.ts';
import { createTempDir, createTempRepo } from '../test-support/index.ts';
import { RUNDIFF_BIN } from '../test-support/cli-process.ts';

const BIN = RUNDIFF_BIN;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function rundiff(
  args: string[],
  opts: { cwd: string; env?: Record<string, string>; onStdout?: (stdout: string, pid: number) => void },
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      opts.onStdout?.(stdout, child.pid!);
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const SCRIPT =
  'printf "new\\n" > added.txt && printf "edited\\n" >> edit.txt && rm gone.txt && mv old.txt moved.txt && echo done';

describe('rundiff run', () => {
  it("records a shell command that adds, edits, deletes and renames files; stdout is the command's; the summary goes to stderr", async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const repo = createTempRepo({
      files: { 'edit.txt': 'one\n', 'gone.txt': 'bye\n', 'old.txt': 'same content\nkept\n' },
    });
    cleanups.push(() => repo.cleanup());
    const res = await rundiff(
      ['run', '--server', t.server.url, '--session', 'cli-1', '--title', 'shell edits', '--', 'sh', '-c', SCRIPT],
      { cwd: repo.dir },
    );
    expect(res.code).toBe(0);
    expect(res.stdout).toBe('done\n');
    const lines = res.stderr.trim().split('\n');
    expect(lines[0]).toBe('rundiff: session cli-1');
    expect(lines[1]).toBe(`rundiff: ${t.server.url}/sessions/cli-1`);
    expect(lines.slice(2)).toEqual([
      'Changed 4 files',
      'A added.txt +1 -0',
      'M edit.txt +1 -0',
      'D gone.txt +0 -1',
      'R old.txt -> moved.txt +0 -0',
    ]);
    const detail = await t.get('/api/hermes/sessions/cli-1');
    expect(detail.body.session).toMatchObject({
      title: 'shell edits',
      workspace: repo.dir,
      run_count: 1,
      changed_count: 4,
    });
    expect(detail.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', `sh -c '${SCRIPT}'`],
      ['assistant', expect.stringMatching(/^exit 0 in (\d+ ms|\d+\.\d s)$/)],
    ]);
    expect(detail.body.runs[0]).toMatchObject({
      status: 'completed',
      source: 'run',
      tracking: true,
      title: 'shell edits',
    });
  });

  it('a reader that goes away (`rundiff run ... 2>&1 | head -1`) does not stop the run from being recorded', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const repo = createTempRepo({ files: { 'edit.txt': 'one\n' } });
    cleanups.push(() => repo.cleanup());
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(
        process.execPath,
        [BIN, 'run', '--server', t.server.url, '--session', 'cli-pipe', '--', 'sh', '-c', 'echo two >> edit.txt'],
        {
          cwd: repo.dir,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      // The reader takes the first line, then closes both pipes, as `head -1` does.
      child.stderr.once('data', () => {
        child.stderr.destroy();
        child.stdout.destroy();
      });
      child.on('close', (c) => resolve(c));
    });
    expect(code).toBe(0);
    const detail = await t.get('/api/hermes/sessions/cli-pipe');
    expect(detail.status).toBe(200);
    expect(detail.body.runs).toEqual([expect.objectContaining({ status: 'completed' })]);
    expect(detail.body.changes[0]).toMatchObject({ changed_count: 1 });
  });

  it("a failing command: its exit code is rundiff's, the run is failed with the outcome", async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const res = await rundiff(
      ['run', '--server', t.server.url, '--session', 'cli-2', '--', 'sh', '-c', 'echo x > f.txt; exit 3'],
      { cwd: dir },
    );
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('Changed 1 file\nA f.txt +1 -0');
    const detail = await t.get('/api/hermes/sessions/cli-2');
    expect(detail.body.runs[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(/^exit 3 in/) });
  });

  it('a command that does not exist exits 127 and the run is failed', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const res = await rundiff(['run', '--server', t.server.url, '--session', 'cli-3', '--', 'no-such-command-here'], {
      cwd: dir,
    });
    expect(res.code).toBe(127);
    expect(res.stderr).toContain('no-such-command-here: command not found');
    expect(res.stderr).toContain('No files changed');
  });

  it('SIGTERM mid-run is forwarded to the command, the run is failed and rundiff exits 143', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const marker = path.join(dir, 'started');
    // The command says on its stdout (which is rundiff's) that it runs; only then is rundiff signalled.
    let signalled = false;
    const res = await rundiff(
      [
        'run',
        '--server',
        t.server.url,
        '--session',
        'cli-4',
        '--',
        'sh',
        '-c',
        `touch ${marker}; echo running; exec sleep 30`,
      ],
      {
        cwd: dir,
        onStdout: (stdout, pid) => {
          if (signalled || !stdout.includes('running\n')) return;
          signalled = true;
          process.kill(pid, 'SIGTERM');
        },
      },
    );
    expect(res.code).toBe(143);
    const detail = await t.get('/api/hermes/sessions/cli-4');
    expect(detail.body.runs[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(/SIGTERM/) });
    expect(res.stderr).toContain('Changed 1 file\nA started +0 -0');
  });

  it('with no server reachable it records straight into the database and says so', async () => {
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const db = path.join(dir, 'data', 'offline.db');
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    const res = await rundiff(
      [
        'run',
        '--server',
        'http://127.0.0.1:9',
        '--db',
        db,
        '--session',
        'off-1',
        '--',
        'sh',
        '-c',
        'echo hi > hello.txt',
      ],
      { cwd: ws },
    );
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`rundiff: no server at http://127.0.0.1:9; recording into ${db}`);
    expect(res.stderr).toContain('Changed 1 file\nA hello.txt +1 -0');
    const rd = createRundiff({ db, env: {} });
    cleanups.push(() => rd.close());
    expect(await rd.store.sessions.get('off-1')).toMatchObject({ run_count: 1, changed_count: 1 });
  });

  it('a token-protected server: without RUNDIFF_TOKEN a clear error and the command does not run; with it the run is recorded', async () => {
    const t = await startTestServer({ env: { RUNDIFF_TOKEN: 'sekrit' } });
    cleanups.push(() => t.close());
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const refused = await rundiff(['run', '--server', t.server.url, '--', 'sh', '-c', 'echo ran > ran.txt'], {
      cwd: dir,
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('needs a token: set RUNDIFF_TOKEN');
    expect(fs.existsSync(path.join(dir, 'ran.txt'))).toBe(false);
    const ok = await rundiff(
      ['run', '--server', t.server.url, '--session', 'tok-1', '--', 'sh', '-c', 'echo ran > ran.txt'],
      {
        cwd: dir,
        env: { RUNDIFF_TOKEN: 'sekrit' },
      },
    );
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain('A ran.txt +1 -0');
  });

  it('--server without a scheme is an error (exit 2) while a server runs; nothing is recorded anywhere', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const db = path.join(dir, 'fallback.db');
    const hostPort = new URL(t.server.url).host;
    for (const bad of [hostPort, `ftp://${hostPort}`, 'not a url']) {
      const res = await rundiff(['run', '--server', bad, '--db', db, '--', 'sh', '-c', 'echo ran > ran.txt'], {
        cwd: dir,
      });
      expect({ bad, code: res.code }).toEqual({ bad, code: 2 });
      expect(res.stderr).toMatch(/--server .* (is not a URL|must start with http:\/\/ or https:\/\/)/);
      expect(res.stderr).not.toContain('no server at');
    }
    expect(fs.existsSync(path.join(dir, 'ran.txt'))).toBe(false);
    expect(fs.existsSync(db)).toBe(false);
    expect((await t.get('/api/hermes/sessions')).body.sessions).toEqual([]);
    // Positive control: the same address with its scheme records on that server.
    const ok = await rundiff(['run', '--server', `http://${hostPort}`, '--db', db, '--', 'true'], { cwd: dir });
    expect(ok.code).toBe(0);
    expect((await t.get('/api/hermes/sessions')).body.sessions).toHaveLength(1);
  });

  it('--title names the run and --session keeps the title of an existing session; a new or untitled one is named after the run', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const title = async (id: string) => (await t.get(`/api/hermes/sessions/${id}`)).body.session.title;
    await rundiff(['run', '--server', t.server.url, '--session', 'keep', '--', 'echo', 'first'], { cwd: dir });
    expect(await title('keep')).toBe('echo first');
    await rundiff(['run', '--server', t.server.url, '--session', 'keep', '--', 'echo', 'second'], { cwd: dir });
    expect(await title('keep')).toBe('echo first');
    await rundiff(['run', '--server', t.server.url, '--session', 'keep', '--title', 'Lint pass', '--', 'true'], {
      cwd: dir,
    });
    expect(await title('keep')).toBe('echo first');
    const runs = (await t.get('/api/hermes/sessions/keep')).body.runs as { title: string | null }[];
    expect(runs.map((r) => r.title)).toEqual([null, null, 'Lint pass']);
    await t.post({ type: 'session.upsert', session_id: 'untitled' });
    await rundiff(['run', '--server', t.server.url, '--session', 'untitled', '--title', 'First pass', '--', 'true'], {
      cwd: dir,
    });
    expect(await title('untitled')).toBe('First pass');
    await rundiff(['run', '--server', t.server.url, '--', 'echo', 'named'], { cwd: dir });
    const sessions = (await t.get('/api/hermes/sessions')).body.sessions as { title: string }[];
    expect(sessions.map((s) => s.title)).toContain('echo named');
  });

  it('--title longer than 500 characters is refused before the command runs', async () => {
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const res = await rundiff(
      ['run', '--server', 'http://127.0.0.1:9', '--title', 'x'.repeat(501), '--', 'touch', 'ran'],
      {
        cwd: dir,
      },
    );
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--title must be at most 500 characters');
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false);
    // Positive control: 500 characters are a title.
    const ok = await rundiff(
      [
        'run',
        '--server',
        'http://127.0.0.1:9',
        '--db',
        path.join(dir, 'x.db'),
        '--title',
        'x'.repeat(500),
        '--',
        'touch',
        'ran',
      ],
      {
        cwd: dir,
      },
    );
    expect(ok.code).toBe(0);
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(true);
  });

  it('from a subfolder of a repository the whole repository is tracked, and stderr says so', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const repo = createTempRepo({ files: { 'top.txt': 'top\n', 'sub/inner.txt': 'inner\n' } });
    cleanups.push(() => repo.cleanup());
    const res = await rundiff(
      [
        'run',
        '--server',
        t.server.url,
        '--session',
        'sub',
        '--',
        'sh',
        '-c',
        'echo x >> ../top.txt && echo y >> inner.txt',
      ],
      { cwd: path.join(repo.dir, 'sub') },
    );
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`rundiff: tracking the repository at ${repo.dir} (run from sub/)`);
    expect(res.stderr).toContain('Changed 2 files\nM sub/inner.txt +1 -0\nM top.txt +1 -0');
    expect((await t.get('/api/hermes/sessions/sub')).body.session.workspace).toBe(repo.dir);
    // A subfolder named with --workspace is tracked as named, and stderr says it is only part of the repository.
    const named = await rundiff(
      [
        'run',
        '--server',
        t.server.url,
        '--workspace',
        'sub',
        '--',
        'sh',
        '-c',
        'echo z >> top.txt && echo z >> sub/inner.txt',
      ],
      { cwd: repo.dir },
    );
    expect(named.stderr).toContain(
      `rundiff: tracking only ${path.join(repo.dir, 'sub')}, part of the repository at ${repo.dir}; paths are relative to it`,
    );
    expect(named.stderr).toContain('Changed 1 file\nM inner.txt +1 -0');
  });

  it('a run that overlapped another says so on stderr; one that did not, does not', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    cleanups.push(() => repo.cleanup());
    const alone = await rundiff(['run', '--server', t.server.url, '--', 'sh', '-c', 'echo 1 >> a.txt'], {
      cwd: repo.dir,
    });
    expect(alone.stderr).toContain('M a.txt +1 -0');
    expect(alone.stderr).not.toContain('at the same time');
    // Another run is open in the same workspace for the whole command.
    await t.post({ type: 'run.started', session_id: 'other', run_id: 'open', workspace: repo.dir });
    const overlapped = await rundiff(['run', '--server', t.server.url, '--', 'sh', '-c', 'echo 2 >> a.txt'], {
      cwd: repo.dir,
    });
    expect(overlapped.stderr).toContain(
      'rundiff: another run or tool call was open in this workspace at the same time: the files above may include its edits',
    );
  });

  it('a planted core.worktree naming another existing folder (empty or not): the record is the same as without it', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const script = 'echo 6 >> f.txt; echo new > u.txt; mkdir d; echo n > d/v.txt; rm gone.txt';
    const summaries: string[][] = [];
    for (const plant of ['none', 'empty', 'full'] as const) {
      const repo = createTempRepo({ files: { 'f.txt': '1\n2\n', 'gone.txt': 'g\n' } });
      cleanups.push(() => repo.cleanup());
      if (plant !== 'none') {
        const elsewhere = createTempDir('rundiff-elsewhere-');
        cleanups.push(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
        if (plant === 'full') fs.writeFileSync(path.join(elsewhere, 'decoy.txt'), 'decoy\n');
        repo.git('config', 'core.worktree', elsewhere);
      }
      const first = await rundiff(
        ['run', '--server', t.server.url, '--session', `wt-${plant}`, '--', 'sh', '-c', script],
        {
          cwd: repo.dir,
        },
      );
      const second = await rundiff(
        ['run', '--server', t.server.url, '--session', `wt-${plant}`, '--', 'sh', '-c', 'echo more >> u.txt'],
        { cwd: repo.dir },
      );
      expect([first.code, second.code]).toEqual([0, 0]);
      summaries.push([...first.stderr.trim().split('\n').slice(2), ...second.stderr.trim().split('\n').slice(2)]);
    }
    expect(summaries[0]).toEqual([
      'Changed 4 files',
      'A d/v.txt +1 -0',
      'M f.txt +1 -0',
      'D gone.txt +0 -1',
      'A u.txt +1 -0',
      'Changed 1 file',
      'M u.txt +1 -0',
    ]);
    expect(summaries[1]).toEqual(summaries[0]);
    expect(summaries[2]).toEqual(summaries[0]);
  });

  it('file names holding ESC, CR, LF, TAB, a quote or a backslash are quoted in the summary as git quotes them', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const script =
      'printf x > "$(printf \'red\\033[31m.txt\')"; printf x > "$(printf \'cr\\rrow.txt\')"; ' +
      'printf x > "$(printf \'two\\nlines.txt\')"; printf x > "$(printf \'tab\\there.txt\')"; ' +
      "printf x > 'q\"b\\s.txt'; printf x > 'caf\u00e9.txt'";
    const res = await rundiff(['run', '--server', t.server.url, '--session', 'quoted', '--', 'sh', '-c', script], {
      cwd: dir,
    });
    expect(res.code).toBe(0);
    for (const raw of ['\u001b', '\r', '\t']) expect(res.stderr).not.toContain(raw);
    expect(res.stderr.trim().split('\n').slice(2).sort()).toEqual(
      [
        'Changed 6 files',
        'A "cr\\rrow.txt" +1 -0',
        'A "q\\"b\\\\s.txt" +1 -0',
        'A "red\\033[31m.txt" +1 -0',
        'A "tab\\there.txt" +1 -0',
        'A "two\\nlines.txt" +1 -0',
        'A caf\u00e9.txt +1 -0',
      ].sort(),
    );
    // The names are stored as they are: only the terminal output is quoted.
    expect(fs.readdirSync(dir).sort()).toContain('tab\there.txt');
  });

  it('usage errors exit 2 with help; --help prints it on stdout', async () => {
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const none = await rundiff(['run'], { cwd: dir });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no command given');
    const help = await rundiff(['run', '--help'], { cwd: dir });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: rundiff run');
  });
});
