import { describe, expect, it } from 'vitest';
import { AppError } from './errors.ts';
import { DEFAULT_LIMITS, defaultDbPath, limitFlagName, resolveConfig, SettingError, SETTINGS } from './config.ts';

describe('config', () => {
  it('defaults follow docs/contract.md sections 1 and 7', () => {
    const c = resolveConfig({}, { HOME: '/home/u' });
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 7420,
      token: null,
      workspaceRoots: null,
      requireCommitApproval: false,
    });
    expect(c.approvalTimeoutMs).toBe(120_000);
    expect(c.dbPath).toBe('/home/u/.local/share/rundiff/rundiff.db');
    expect(c.limits).toEqual(DEFAULT_LIMITS);
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.limits)).toBe(true);
  });

  it('XDG_DATA_HOME moves the default database', () => {
    expect(defaultDbPath({ XDG_DATA_HOME: '/data' }, '/home/u')).toBe('/data/rundiff/rundiff.db');
  });

  it('flags win over environment, environment over defaults', () => {
    const env = {
      HOME: '/h',
      RUNDIFF_HOST: '0.0.0.0',
      RUNDIFF_PORT: '9000',
      RUNDIFF_DB: '/env.db',
      RUNDIFF_MAX_CHANGED_FILES: '7',
    };
    const fromEnv = resolveConfig({}, env);
    expect(fromEnv).toMatchObject({ host: '0.0.0.0', port: 9000, dbPath: '/env.db' });
    expect(fromEnv.limits.maxChangedFiles).toBe(7);
    const fromFlags = resolveConfig(
      { host: '127.0.0.2', port: '9100', db: '/flag.db', limits: { maxChangedFiles: '3' } },
      env,
    );
    expect(fromFlags).toMatchObject({ host: '127.0.0.2', port: 9100, dbPath: '/flag.db' });
    expect(fromFlags.limits.maxChangedFiles).toBe(3);
  });

  it('the host is a bare name or IP address; a scheme, port or path in it is a setting error', () => {
    const host = (h: string) => resolveConfig({}, { HOME: '/h', RUNDIFF_HOST: h }).host;
    for (const ok of ['localhost', '0.0.0.0', '127.0.0.1', '::', '::1', 'box.example.com', 'my_box', 'devbox.'])
      expect(host(ok)).toBe(ok);
    expect(host('[::1]')).toBe('::1');
    for (const bad of ['127.0.0.1:7561', 'http://127.0.0.1', 'box/path', '[::1]:7420', 'a b', '-box', 'box..x']) {
      expect(() => host(bad), bad).toThrow(SettingError);
      expect(() => host(bad), bad).toThrow(`RUNDIFF_HOST ${JSON.stringify(bad)} is not a host name or IP address`);
    }
    expect(() => resolveConfig({ host: 'http://box' }, { HOME: '/h' })).toThrow('--host "http://box"');
  });

  it('the database URL: none by default, RUNDIFF_DATABASE_URL, and --database-url over it', () => {
    expect(resolveConfig({}, { HOME: '/h' }).databaseUrl).toBeNull();
    expect(resolveConfig({}, { HOME: '/h', RUNDIFF_DATABASE_URL: '' }).databaseUrl).toBeNull();
    const env = { HOME: '/h', RUNDIFF_DATABASE_URL: 'postgres://env/db' };
    expect(resolveConfig({}, env).databaseUrl).toBe('postgres://env/db');
    expect(resolveConfig({ databaseUrl: 'postgres://flag/db' }, env).databaseUrl).toBe('postgres://flag/db');
  });

  it('every limit has an environment variable and a --flag name', () => {
    expect(limitFlagName('maxScannedFiles')).toBe('--max-scanned-files');
    expect(limitFlagName('scanTimeoutMs')).toBe('--scan-timeout-ms');
    const c = resolveConfig(
      {},
      { RUNDIFF_SCAN_TIMEOUT_MS: '5', RUNDIFF_CHECKPOINT_TTL_MS: '60000', RUNDIFF_RETENTION_DAYS: '2' },
    );
    expect(c.limits).toMatchObject({ scanTimeoutMs: 5, checkpointTtlMs: 60_000, retentionDays: 2 });
  });

  it('the PostgreSQL pool bounds come from the environment, with defaults, and a bad one is refused by name', () => {
    expect(resolveConfig({}, {}).database).toEqual({
      maxConnections: 10,
      statementTimeoutMs: 30_000,
      connectTimeoutMs: 10_000,
    });
    expect(
      resolveConfig(
        {},
        {
          RUNDIFF_DATABASE_POOL_MAX: '4',
          RUNDIFF_DATABASE_STATEMENT_TIMEOUT_MS: '5000',
          RUNDIFF_DATABASE_CONNECT_TIMEOUT_MS: '2500',
        },
      ).database,
    ).toEqual({ maxConnections: 4, statementTimeoutMs: 5_000, connectTimeoutMs: 2_500 });
    for (const notDecimal of ['0x10', '1e5', '0b11', '2.5', '-3'])
      expect(() => resolveConfig({}, { RUNDIFF_DATABASE_POOL_MAX: notDecimal })).toThrow(
        /RUNDIFF_DATABASE_POOL_MAX must be a whole number/,
      );
    expect(() => resolveConfig({}, { RUNDIFF_DATABASE_POOL_MAX: '0' })).toThrow(
      /RUNDIFF_DATABASE_POOL_MAX must be a whole number >= 1/,
    );
    expect(() => resolveConfig({}, { RUNDIFF_DATABASE_STATEMENT_TIMEOUT_MS: 'soon' })).toThrow(
      /RUNDIFF_DATABASE_STATEMENT_TIMEOUT_MS/,
    );
  });

  it('an edge needs the centre`s token, of the length a centre accepts', () => {
    const upstream = { upstream: 'http://centre.example:7420' };
    expect(() => resolveConfig(upstream, {})).toThrow(/--upstream needs the token the centre gave this edge/);
    expect(() => resolveConfig(upstream, { RUNDIFF_UPSTREAM_TOKEN: 'short' })).toThrow(
      /RUNDIFF_UPSTREAM_TOKEN must be at least 16 characters/,
    );
    const c = resolveConfig(upstream, { RUNDIFF_UPSTREAM_TOKEN: 'a'.repeat(16) });
    expect(c.edge).toMatchObject({ upstream: 'http://centre.example:7420', upstreamToken: 'a'.repeat(16) });
  });

  it('roots, allowed hosts, token and approval come from the environment', () => {
    const c = resolveConfig(
      {},
      {
        RUNDIFF_WORKSPACE_ROOTS: '/a:/b/c:',
        RUNDIFF_ALLOWED_HOSTS: 'Box.local, example.test',
        RUNDIFF_TOKEN: 's3cret',
        RUNDIFF_REQUIRE_COMMIT_APPROVAL: '1',
        RUNDIFF_APPROVAL_TIMEOUT_MS: '500',
      },
    );
    expect(c).toMatchObject({
      workspaceRoots: ['/a', '/b/c'],
      allowedHosts: ['box.local', 'example.test'],
      token: 's3cret',
      requireCommitApproval: true,
      approvalTimeoutMs: 500,
    });
  });

  it('a bad number is a clear invalid_input error naming the setting', () => {
    for (const env of [
      { RUNDIFF_PORT: 'abc' },
      { RUNDIFF_PORT: '70000' },
      { RUNDIFF_MAX_SCANNED_FILES: '0' },
      { RUNDIFF_MAX_SCANNED_FILES: '1.5' },
    ]) {
      let err: unknown;
      try {
        resolveConfig({}, env);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('invalid_input');
      expect((err as AppError).message).toMatch(/PORT|port|SCANNED/);
    }
  });

  it('a whitespace-only RUNDIFF_TOKEN is refused: no client could send it', () => {
    for (const token of [' ', '   ', '\t', ' \n ']) {
      expect(() => resolveConfig({}, { RUNDIFF_TOKEN: token })).toThrow(/RUNDIFF_TOKEN is only whitespace/);
    }
    // Positive control: an unset or empty token means no token, as before.
    expect(resolveConfig({}, {}).token).toBeNull();
    expect(resolveConfig({}, { RUNDIFF_TOKEN: '' }).token).toBeNull();
  });

  it('a RUNDIFF_TOKEN a Bearer header cannot carry is refused with the reason, never echoing it', () => {
    const cases: [string, RegExp][] = [
      ['abc def', /whitespace at position 4/],
      [' secret', /whitespace at position 1/],
      ['secret\n', /whitespace at position 7/],
      ['sec\u0007ret', /a control character at position 4/],
      ['sec\u007fret', /a control character at position 4/],
      ['sécret', /a non-ASCII character at position 2/],
      ['sec\u00a0ret', /whitespace at position 4/],
    ];
    for (const [token, reason] of cases) {
      let err: unknown;
      try {
        resolveConfig({}, { RUNDIFF_TOKEN: token });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('invalid_input');
      expect((err as AppError).message).toMatch(reason);
      expect((err as AppError).message).not.toContain(token);
    }
    // Positive control: every printable ASCII character but space is fine.
    const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('');
    expect(resolveConfig({}, { RUNDIFF_TOKEN: printable }).token).toBe(printable);
  });

  it('HTTP timeouts default to 30 s per request, 10 s for headers, 5 s keep-alive, and follow the environment', () => {
    expect(resolveConfig({}, {}).http).toEqual({
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 5_000,
    });
    const c = resolveConfig(
      {},
      {
        RUNDIFF_REQUEST_TIMEOUT_MS: '20000',
        RUNDIFF_HEADERS_TIMEOUT_MS: '4000',
        RUNDIFF_KEEP_ALIVE_TIMEOUT_MS: '1000',
      },
    );
    expect(c.http).toEqual({ requestTimeoutMs: 20_000, headersTimeoutMs: 4_000, keepAliveTimeoutMs: 1_000 });
    // The headers timeout never exceeds the request timeout (Node refuses that combination).
    expect(resolveConfig({}, { RUNDIFF_REQUEST_TIMEOUT_MS: '2000' }).http.headersTimeoutMs).toBe(2_000);
    expect(() => resolveConfig({}, { RUNDIFF_REQUEST_TIMEOUT_MS: '0' })).toThrow(/RUNDIFF_REQUEST_TIMEOUT_MS/);
    expect(() => resolveConfig({}, { RUNDIFF_HEADERS_TIMEOUT_MS: 'soon' })).toThrow(/RUNDIFF_HEADERS_TIMEOUT_MS/);
  });

  it('every number setting refuses a value it cannot take the same way: the setting, the value, what to write', () => {
    const numbers = SETTINGS.filter((s) => s.accepts.startsWith('a whole number'));
    expect(numbers.length).toBeGreaterThan(20);
    for (const s of numbers) {
      for (const bad of ['abc', '1e3', '-1']) {
        let err: unknown;
        try {
          resolveConfig({}, { [s.env]: bad });
        } catch (e) {
          err = e;
        }
        expect(err, `${s.env}=${bad}`).toBeInstanceOf(SettingError);
        expect((err as SettingError).message).toContain(`${s.env} must be a whole number`);
        expect((err as SettingError).message).toContain(`got "${bad}"`);
        expect((err as SettingError).hint).toContain(`e.g. ${s.env}=`);
      }
      // Positive control: the default written back is taken.
      expect(() => resolveConfig({}, { [s.env]: s.defaultText.split(' ')[0]! })).not.toThrow();
    }
    const flagged = resolveConfig({ limits: { maxChangedFiles: '5' } }, {}).limits.maxChangedFiles;
    expect(flagged).toBe(5);
    expect(() => resolveConfig({ limits: { maxChangedFiles: 'x' } }, {})).toThrow(
      '--max-changed-files must be a whole number >= 1, got "x"',
    );
  });

  it('RUNDIFF_REQUIRE_COMMIT_APPROVAL is 1 or 0: anything else is refused, not taken as off', () => {
    expect(resolveConfig({}, { RUNDIFF_REQUIRE_COMMIT_APPROVAL: '1' }).requireCommitApproval).toBe(true);
    expect(resolveConfig({}, { RUNDIFF_REQUIRE_COMMIT_APPROVAL: '0' }).requireCommitApproval).toBe(false);
    expect(resolveConfig({}, { RUNDIFF_REQUIRE_COMMIT_APPROVAL: '' }).requireCommitApproval).toBe(false);
    expect(resolveConfig({ requireCommitApproval: true }, {}).requireCommitApproval).toBe(true);
    for (const bad of ['yes', 'true', 'on', '2'])
      expect(() => resolveConfig({}, { RUNDIFF_REQUIRE_COMMIT_APPROVAL: bad })).toThrow(SettingError);
  });
});
