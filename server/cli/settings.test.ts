import fs from 'node:fs';
import path from 'node:path';
import { runRundiff } from '../test-support/cli-process.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer } from '../test-support/server-harness.ts';
import { createTempDir } from '../test-support/index.ts';

/**
 * Every setting a command cannot use is refused the same way, whichever command reads it and
 * whichever kind of value it is: exit 2 before anything runs, naming the setting, what it was
 * given and what to write instead (docs/settings.md).
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const rundiff = (args: string[], cwd: string, env: Record<string, string>) =>
  runRundiff(args, cwd, { HOME: cwd, ...env });

function folder() {
  const dir = createTempDir('rundiff-settings-');
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { dir, db: path.join(dir, 'fallback.db') };
}

describe('a bad setting is refused the same way by every command', () => {
  it('rundiff run with RUNDIFF_PORT=abc exits 2 saying what to write; nothing runs or is recorded', async () => {
    const { dir, db } = folder();
    const res = await rundiff(['run', '--session', 's1', '--', 'sh', '-c', 'echo ran > ran.txt'], dir, {
      RUNDIFF_PORT: 'abc',
      RUNDIFF_DB: db,
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('rundiff run: RUNDIFF_PORT must be a whole number >= 0 and <= 65535, got "abc"');
    expect(res.stderr).toContain('write decimal digits only, e.g. RUNDIFF_PORT=7420');
    expect(fs.existsSync(path.join(dir, 'ran.txt'))).toBe(false);
    expect(fs.existsSync(db)).toBe(false);
  });

  it('positive control: the same run with a usable RUNDIFF_PORT runs and is recorded', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const { dir, db } = folder();
    const res = await rundiff(['run', '--session', 's2', '--', 'sh', '-c', 'echo ran > ran.txt'], dir, {
      RUNDIFF_PORT: String(t.server.port),
      RUNDIFF_DB: db,
    });
    expect(res.code).toBe(0);
    expect(fs.existsSync(path.join(dir, 'ran.txt'))).toBe(true);
    expect((await t.get('/api/hermes/sessions/s2')).status).toBe(200);
  });

  it('serve refuses a bad limit flag, a bad limit variable and a switch that is not 1 or 0, before listening', async () => {
    const { dir, db } = folder();
    const flag = await rundiff(['serve', '--port', '0', '--max-scanned-files', '0'], dir, { RUNDIFF_DB: db });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('rundiff serve: --max-scanned-files must be a whole number >= 1, got "0"');
    expect(flag.stderr).toContain('e.g. --max-scanned-files 1000000');

    const variable = await rundiff(['serve', '--port', '0'], dir, { RUNDIFF_DB: db, RUNDIFF_SCAN_TIMEOUT_MS: '1e3' });
    expect(variable.code).toBe(2);
    expect(variable.stderr).toContain('RUNDIFF_SCAN_TIMEOUT_MS must be a whole number >= 1 (ms), got "1e3"');
    expect(variable.stderr).toContain('e.g. RUNDIFF_SCAN_TIMEOUT_MS=1000');

    const onOff = await rundiff(['serve', '--port', '0'], dir, {
      RUNDIFF_DB: db,
      RUNDIFF_REQUIRE_COMMIT_APPROVAL: 'yes',
    });
    expect(onOff.code).toBe(2);
    expect(onOff.stderr).toContain('RUNDIFF_REQUIRE_COMMIT_APPROVAL must be 1 or 0, got "yes"');
    expect(onOff.stderr).toContain('write RUNDIFF_REQUIRE_COMMIT_APPROVAL=1 to turn it on');

    const upstream = await rundiff(['serve', '--port', '0', '--upstream', 'ftp://centre'], dir, {
      RUNDIFF_DB: db,
      RUNDIFF_UPSTREAM_TOKEN: 'a'.repeat(16),
    });
    expect(upstream.code).toBe(2);
    expect(upstream.stderr).toContain('--upstream must be an http(s) URL without credentials');
    for (const r of [flag, variable, onOff, upstream]) expect(r.stderr).not.toContain('serving on');
    expect(fs.existsSync(db)).toBe(false);
  });

  it('mcp and hooks refuse a bad number the same way (exit 2, before writing)', async () => {
    const { dir, db } = folder();
    const env = { RUNDIFF_DB: db, RUNDIFF_MAX_BODY_BYTES: '2MB' };
    const said = 'RUNDIFF_MAX_BODY_BYTES must be a whole number >= 1 (bytes), got "2MB"';
    const mcp = await rundiff(['mcp', '--workspace', dir], dir, env);
    expect(mcp.code).toBe(2);
    expect(mcp.stderr).toContain(`rundiff mcp: ${said}`);
    const hooks = await rundiff(['hooks', 'install', 'claude-code'], dir, env);
    expect(hooks.code).toBe(2);
    expect(hooks.stderr).toContain(`rundiff hooks: ${said}`);
    expect(fs.existsSync(path.join(dir, '.claude'))).toBe(false);
    expect(fs.existsSync(db)).toBe(false);
  });
});
