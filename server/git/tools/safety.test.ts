import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import {
  createTempDir,
  createTempRepo,
  ALL_PLANTS_RAN,
  gitFingerprint,
  plantControls,
  plantHostileConfig,
  type TempRepo,
} from '../../test-support/index.ts';
import { toolHarness, withIdentity } from '../../test-support/tool-harness.ts';

const repos: TempRepo[] = [];
const fresh = (files: Record<string, string> = { 'a.txt': 'one\n', 'b.txt': 'bee\n' }) => {
  const r = createTempRepo({ files });
  repos.push(r);
  return r;
};
afterEach(() => {
  while (repos.length) repos.pop()!.cleanup();
});

/** Every read tool, with inputs that make it read the work tree, the index, history and attributes. */
const READ_CALLS: [string, Record<string, unknown>][] = [
  ['git_status', {}],
  ['git_diff', {}],
  ['git_diff', { staged: true }],
  ['git_diff', { spec: 'HEAD' }],
  ['git_diff', { spec: 'HEAD~1..HEAD' }],
  ['git_log', {}],
  ['git_log', { path: 'a.txt' }],
  ['git_show', { ref: 'HEAD' }],
  ['git_branch', {}],
];

describe('B26: read tools never run planted code and never write .git', () => {
  it.each(READ_CALLS)(
    'B26: %s %j runs no hook, fsmonitor, pager, filter, textconv, external diff or gpg, and leaves .git byte-identical',
    async (tool, input) => {
      const repo = fresh();
      repo.write('a.txt', 'two\n');
      repo.commit('second');
      repo.write('a.txt', 'three\n');
      repo.write('b.txt', 'staged\n');
      repo.git('add', 'b.txt');
      repo.write('untracked.txt', 'u\n');
      // A touched file with unchanged content makes git re-read it (through the clean filter, if not neutralised).
      const future = new Date(Date.now() + 5000);
      fs.utimesSync(path.join(repo.dir, 'b.txt'), future, future);
      const { marker, markerExists } = plantHostileConfig(repo);
      const script = path.join(repo.dir, '.git', 'evil.sh');
      repo.git('config', 'log.showSignature', 'true');
      repo.git('config', 'gpg.program', script);
      fs.appendFileSync(path.join(repo.dir, '.gitattributes'), '* filter=evil diff=evil\n');
      const before = gitFingerprint(path.join(repo.dir, '.git'));
      const indexBefore = fs.readFileSync(path.join(repo.dir, '.git', 'index'));
      await toolHarness(repo).call(tool, input);
      expect(markerExists()).toBe(false);
      expect(fs.readFileSync(path.join(repo.dir, '.git', 'index')).equals(indexBefore)).toBe(true);
      expect(gitFingerprint(path.join(repo.dir, '.git'))).toBe(before);
      // Positive control: plain git runs each planted mechanism.
      expect(plantControls(repo, 'evil', marker)).toEqual(ALL_PLANTS_RAN);
    },
  );

  it('B26: git_log and git_show do not verify a planted signature with gpg.program', async () => {
    const repo = fresh();
    // A commit carrying a signature header: verifying it would run gpg.program. Made before the
    // config is planted (the fixture's own update-ref would run the planted reference-transaction hook).
    const tree = repo.git('rev-parse', 'HEAD^{tree}').trim();
    const parent = repo.git('rev-parse', 'HEAD').trim();
    const body = `tree ${tree}\nparent ${parent}\nauthor A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQ==\n -----END PGP SIGNATURE-----\n\nsigned\n`;
    const file = path.join(repo.dir, '.git', 'signed-commit');
    fs.writeFileSync(file, body);
    const oid = repo.git('hash-object', '-t', 'commit', '-w', file).trim();
    repo.git('update-ref', 'refs/heads/main', oid);
    const { markerExists } = plantHostileConfig(repo);
    repo.git('config', 'log.showSignature', 'true');
    repo.git('config', 'gpg.program', path.join(repo.dir, '.git', 'evil.sh'));
    const h = toolHarness(repo);
    await h.call('git_log');
    await h.call('git_show', { ref: 'HEAD' });
    expect(markerExists()).toBe(false);
    // Positive control: plain git verifies the signature with the planted program.
    repo.git('-c', 'core.pager=cat', 'log', '-1');
    expect(markerExists()).toBe(true);
  });
});

describe('a ref never reaches git as an option', () => {
  it.each([
    ['git_diff', 'spec'],
    ['git_log', 'range'],
    ['git_show', 'ref'],
  ])('%s: %s "--output=x.txt" is invalid_ref and writes nothing', async (tool, field) => {
    const repo = fresh();
    const h = toolHarness(repo);
    for (const ref of ['--output=x.txt', '-p', 'HEAD..--output=x.txt', '--output=x.txt..HEAD']) {
      const err = await h.fail(tool, { [field]: ref });
      expect(err.code).toBe('invalid_ref');
    }
    expect(fs.existsSync(path.join(repo.dir, 'x.txt'))).toBe(false);
    expect(repo.git('status', '--porcelain')).toBe('');
  });
});

describe('a path never leaves the repository', () => {
  it('refuses traversal, absolute paths outside, .git, and a symlink leaving the repository', async () => {
    const repo = fresh();
    const outside = createTempDir();
    onTestFinished(() => fs.rmSync(outside, { recursive: true, force: true }));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret\n');
    fs.symlinkSync(outside, path.join(repo.dir, 'escape'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(repo.dir, 'secret-link'));
    const h = toolHarness(repo);
    for (const p of [
      '../../etc/passwd',
      '/etc/passwd',
      '..',
      'a/../../x',
      '.git/config',
      'escape/secret.txt',
      'escape',
      'secret-link',
    ]) {
      for (const [tool, extra] of [
        ['git_diff', {}],
        ['git_log', {}],
        ['git_show', { ref: 'HEAD' }],
      ] as const) {
        const err = await h.fail(tool, { ...extra, path: p });
        expect(err.code, `${tool} ${p}`).toBe('invalid_input');
      }
    }
    withIdentity(repo);
    expect((await h.fail('git_commit', { message: 'm', paths: ['escape/secret.txt'] })).code).toBe('invalid_input');
    // Inside-the-repository spellings still work.
    expect(await h.call('git_diff', { path: './a.txt' })).toMatchObject({ files_changed: 0 });
    expect(await h.call('git_diff', { path: path.join(repo.dir, 'a.txt') })).toMatchObject({ files_changed: 0 });
  });
});
