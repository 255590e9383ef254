import fs from 'node:fs';
import path from 'node:path';
import { runRundiff } from '../test-support/cli-process.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer } from '../test-support/server-harness.ts';
import { createTempDir } from '../test-support/index.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const rundiff = (args: string[], cwd: string, env: Record<string, string>) =>
  runRundiff(args, cwd, { HOME: cwd, ...env });

/** A folder of the test's own, with the database a run would fall back to (never created here). */
function folder() {
  const dir = createTempDir('rundiff-host-');
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { dir, db: path.join(dir, 'fallback.db') };
}

describe('the host setting (RUNDIFF_HOST) is a bare host name or IP address', () => {
  it('rundiff run refuses RUNDIFF_HOST with a port (exit 2, says where the port goes); nothing runs or is recorded anywhere', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const { dir, db } = folder();
    const hostPort = `127.0.0.1:${t.server.port}`;
    const res = await rundiff(['run', '--session', 'host-1', '--', 'sh', '-c', 'echo ran > ran.txt'], dir, {
      RUNDIFF_HOST: hostPort,
      RUNDIFF_DB: db,
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`rundiff run: RUNDIFF_HOST "${hostPort}" is not a host name or IP address`);
    expect(res.stderr).toContain(`the port goes in RUNDIFF_PORT: RUNDIFF_HOST=127.0.0.1 RUNDIFF_PORT=${t.server.port}`);
    expect(res.stderr).not.toContain('recording into');
    expect(fs.existsSync(path.join(dir, 'ran.txt'))).toBe(false);
    expect(fs.existsSync(db)).toBe(false);
    expect((await t.get('/api/hermes/sessions/host-1')).status).toBe(404);

    // Positive control: the same server named the right way records the run.
    const ok = await rundiff(['run', '--session', 'host-2', '--', 'sh', '-c', 'echo ran > ran.txt'], dir, {
      RUNDIFF_HOST: 'localhost',
      RUNDIFF_PORT: String(t.server.port),
      RUNDIFF_DB: db,
    });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain(`rundiff: http://localhost:${t.server.port}/sessions/host-2`);
    expect((await t.get('/api/hermes/sessions/host-2')).status).toBe(200);
  });

  it('a scheme or a path in RUNDIFF_HOST is refused with the host to write instead', async () => {
    const { dir, db } = folder();
    const scheme = await rundiff(['run', '--', 'true'], dir, { RUNDIFF_HOST: 'http://127.0.0.1', RUNDIFF_DB: db });
    expect(scheme.code).toBe(2);
    expect(scheme.stderr).toContain('RUNDIFF_HOST "http://127.0.0.1" is not a host name or IP address');
    expect(scheme.stderr).toContain('no scheme, port or path: RUNDIFF_HOST=127.0.0.1');
    expect(scheme.stderr).not.toContain('[http://');
    const pathed = await rundiff(['run', '--', 'true'], dir, { RUNDIFF_HOST: 'box/rundiff', RUNDIFF_DB: db });
    expect(pathed.code).toBe(2);
    expect(pathed.stderr).toContain('RUNDIFF_HOST "box/rundiff" is not a host name or IP address');
    expect(fs.existsSync(db)).toBe(false);
  });

  it('hooks install, mcp, revert and serve refuse it too (exit 2), before writing, recording or listening', async () => {
    const { dir, db } = folder();
    const env = { RUNDIFF_HOST: '127.0.0.1:7561', RUNDIFF_DB: db };
    const said = 'RUNDIFF_HOST "127.0.0.1:7561" is not a host name or IP address';

    const hooks = await rundiff(['hooks', 'install', 'claude-code'], dir, env);
    expect(hooks.code).toBe(2);
    expect(hooks.stderr).toContain(`rundiff hooks: ${said}`);
    expect(fs.existsSync(path.join(dir, '.claude'))).toBe(false);

    const mcp = await rundiff(['mcp', '--workspace', dir], dir, env);
    expect(mcp.code).toBe(2);
    expect(mcp.stderr).toContain(`rundiff mcp: ${said}`);

    const revert = await rundiff(['revert', 's1', 'r1'], dir, env);
    expect(revert.code).toBe(2);
    expect(revert.stderr).toContain(`rundiff revert: ${said}`);

    const serve = await rundiff(['serve', '--port', '0'], dir, env);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain(`rundiff serve: ${said}`);
    expect(serve.stderr).not.toContain('serving on');
    const flag = await rundiff(['serve', '--host', 'localhost:7561', '--port', '0'], dir, { RUNDIFF_DB: db });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--host "localhost:7561" is not a host name or IP address');
    expect(flag.stderr).toContain('the port goes in --port: --host localhost --port 7561');
    expect(fs.existsSync(db)).toBe(false);
  });

  it('--server "http://" is refused with a usable example, not "http://http://"', async () => {
    const { dir, db } = folder();
    const res = await rundiff(['run', '--server', 'http://', '--', 'true'], dir, { RUNDIFF_DB: db });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      '--server "http://" is not a URL; write it with its scheme, e.g. http://127.0.0.1:7420',
    );
    expect(res.stderr).not.toContain('http://http://');
    const noScheme = await rundiff(['run', '--server', '127.0.0.1:7431', '--', 'true'], dir, { RUNDIFF_DB: db });
    expect(noScheme.code).toBe(2);
    expect(noScheme.stderr).toContain('e.g. http://127.0.0.1:7431');
  });
});
