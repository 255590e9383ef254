import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GitDiffOutput } from '../../../shared/index.ts';
import { createTempRepo, type TempRepo } from '../../test-support/index.ts';
import { toolHarness, withIdentity } from '../../test-support/tool-harness.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

/** a.txt edited; b.txt replaced by a FIFO; c.txt replaced by a listening socket. */
async function repoWithUnreadable(): Promise<TempRepo> {
  const repo = withIdentity(createTempRepo({ files: { 'a.txt': 'one\n', 'b.txt': 'bee\n', 'c.txt': 'sea\n' } }));
  cleanups.push(() => repo.cleanup());
  repo.write('a.txt', 'two\n');
  repo.rm('b.txt');
  execFileSync('mkfifo', [path.join(repo.dir, 'b.txt')]);
  repo.rm('c.txt');
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(path.join(repo.dir, 'c.txt'), resolve));
  cleanups.push(() => server.close());
  return repo;
}

describe('an unreadable tracked file', () => {
  it.each([{}, { spec: 'HEAD' }])(
    'git_diff %j reports it omitted as unreadable and still shows the rest',
    async (input) => {
      const repo = await repoWithUnreadable();
      // Positive control: git itself fails the whole diff on such a file.
      expect(() => repo.git('diff', '--stat')).toThrow(/cannot hash|unsupported file type/);
      const out = await toolHarness(repo).call<GitDiffOutput>('git_diff', input);
      expect(out.diff).toContain('+two');
      expect(out.files.map((f) => f.path).sort()).toEqual(['a.txt', 'b.txt', 'c.txt']);
      expect(out.omitted).toEqual([
        { path: 'b.txt', reason: 'unreadable' },
        { path: 'c.txt', reason: 'unreadable' },
      ]);
      expect(out.truncated).toBe(true);
    },
  );

  it('is never covered by a review, while the readable files can still be committed', async () => {
    const repo = await repoWithUnreadable();
    const h = toolHarness(repo);
    await h.call('git_diff');
    expect((await h.fail('git_commit', { message: 'm', paths: ['b.txt'] })).code).toBe('review_required');
    await h.call('git_commit', { message: 'm', paths: ['a.txt'] });
    expect(repo.git('show', 'HEAD:a.txt')).toBe('two\n');
    expect(fs.existsSync(path.join(repo.dir, 'b.txt'))).toBe(true);
  });
});
