import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../errors.ts';
import { createTempDir, createTempRepo } from '../../test-support/index.ts';
import {
  createWorkspaceCatalog,
  labelFor,
  resolveRepository,
  selectRepository,
  type KnownRepository,
} from './repositories.ts';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
});

function codeOf(fn: () => unknown): { code: string; details: Record<string, unknown> | undefined } {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, details: err.details };
  }
  throw new Error('expected an AppError');
}

describe('selectRepository', () => {
  const repos: KnownRepository[] = [
    { label: 'api', root: '/w/one/api' },
    { label: 'web', root: '/w/one/web' },
    { label: 'web', root: '/x/two/web' },
    { label: 'tools/cli', root: '/w/one/tools/cli' },
  ];

  it('matches by label, then root path, then a unique folder name; absent = the default', () => {
    expect(selectRepository(repos, 'api', null).root).toBe('/w/one/api');
    expect(selectRepository(repos, 'tools/cli', null).root).toBe('/w/one/tools/cli');
    expect(selectRepository(repos, '/x/two/web', null).root).toBe('/x/two/web');
    expect(selectRepository(repos, 'cli', null).root).toBe('/w/one/tools/cli');
    expect(selectRepository(repos, undefined, '/w/one/web').root).toBe('/w/one/web');
  });

  it('answers unknown and ambiguous names with candidates an agent can pass back', () => {
    const missing = codeOf(() => selectRepository(repos, 'nope', null));
    expect(missing.code).toBe('repository_not_found');
    expect(missing.details?.candidates).toEqual(['api', '/w/one/web', '/x/two/web', 'tools/cli']);
    const amb = codeOf(() => selectRepository(repos, 'web', null));
    expect(amb.code).toBe('repository_ambiguous');
    expect(amb.details?.candidates).toEqual(['/w/one/web', '/x/two/web']);
  });

  it('labels a folder relative to the closest workspace root containing it, else by its name', () => {
    expect(labelFor('/w/one/tools/cli', ['/w/one', '/w'])).toBe('tools/cli');
    expect(labelFor('/w/one', ['/w/one'])).toBe('one');
  });
});

describe('createWorkspaceCatalog', () => {
  it('finds repositories inside a workspace folder that is not one, and picks the only one by default', async () => {
    const ws = createTempDir();
    dirs.push(ws);
    const a = createTempRepo({ files: { 'a.txt': 'a\n' } });
    fs.renameSync(a.dir, path.join(ws, 'alpha'));
    const catalog = createWorkspaceCatalog({ workspaces: [ws] });
    expect(await catalog.list()).toEqual([{ label: 'alpha', root: path.join(ws, 'alpha') }]);
    expect((await resolveRepository(catalog, undefined)).top).toBe(path.join(ws, 'alpha'));
    // A repository created later is found when its name is asked for.
    const b = createTempRepo({ files: { 'b.txt': 'b\n' } });
    fs.mkdirSync(path.join(ws, 'group'));
    fs.renameSync(b.dir, path.join(ws, 'group', 'beta'));
    expect((await resolveRepository(catalog, 'group/beta')).label).toBe('group/beta');
    const amb = await resolveRepository(catalog, undefined).catch((e: AppError) => e);
    expect(amb).toBeInstanceOf(AppError);
    expect((amb as AppError).code).toBe('repository_ambiguous');
  });

  it('answers a workspace that is no repository with not_a_repository', async () => {
    const ws = createTempDir();
    dirs.push(ws);
    const err = await resolveRepository(createWorkspaceCatalog({ workspaces: [ws] }), undefined).catch(
      (e: AppError) => e,
    );
    expect((err as AppError).code).toBe('not_a_repository');
  });
});
