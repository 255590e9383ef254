import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../shared/index.ts';
import { AppError } from './errors.ts';
import { defaultDbPath, limitFlagName, resolveConfig } from './config.ts';

describe('config', () => {
  it('defaults follow CONTRACT sections 1 and 7', () => {
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

  it('every limit has an environment variable and a --flag name', () => {
    expect(limitFlagName('maxScannedFiles')).toBe('--max-scanned-files');
    expect(limitFlagName('scanTimeoutMs')).toBe('--scan-timeout-ms');
    const c = resolveConfig(
      {},
      { RUNDIFF_SCAN_TIMEOUT_MS: '5', RUNDIFF_CHECKPOINT_TTL_MS: '60000', RUNDIFF_RETENTION_DAYS: '2' },
    );
    expect(c.limits).toMatchObject({ scanTimeoutMs: 5, checkpointTtlMs: 60_000, retentionDays: 2 });
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
});
