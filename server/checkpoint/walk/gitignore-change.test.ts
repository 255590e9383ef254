import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { DEFAULT_LIMITS } from '../../config.ts';
import { rows, runChange } from '../../test-support/engine-harness.ts';
import { createTempDir, createTempRepo } from '../../test-support/temp-repo.ts';
import { RACY_MARGIN_MS } from '../model.ts';
import { createEngine } from '../registry.ts';

/**
 * The walk (the strategy for folders outside git, and for a git workspace when it walks alone): a
 * run that deletes or adds a `.gitignore` changes no byte of the files it ignored or un-ignored, so
 * a file there, unchanged, at both ends is not a change; a file the run did write still is.
 */

const walker = createEngine({ limits: Object.freeze({ ...DEFAULT_LIMITS }), dbPath: null, walkOnly: true });
afterAll(() => walker.close());

/** Files written before the checkpoint's racy margin: their times alone vouch for them. */
const settle = () => new Promise((r) => setTimeout(r, RACY_MARGIN_MS + 100));

describe('the walk and a .gitignore the run deletes or adds', () => {
  test('outside git: deleting the root .gitignore reports only it; a file the run wrote is still a change', async () => {
    const dir = createTempDir('rundiff-walk-');
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    const write = (p: string, text: string) => fs.writeFileSync(path.join(dir, p), text);
    write('.gitignore', 'secret.env\n*.log\nout/\n');
    write('a.txt', 'a\n');
    write('secret.env', 'TOKEN=1\n');
    write('app.log', 'started\n');
    fs.mkdirSync(path.join(dir, 'out'));
    write('out/bundle.txt', 'bundle\n');
    await settle();
    const { delta } = await runChange(walker, dir, () => {
      fs.rmSync(path.join(dir, '.gitignore'));
      write('app.log', 'started\nstopped\n');
    });
    // app.log had no start recorded (ignored then): it is answered added, as before.
    expect(rows(delta)).toEqual(['D .gitignore +0 -3', 'A app.log +2 -0']);

    const again = await runChange(walker, dir, () => write('.gitignore', 'secret.env\nout/\n'));
    expect(rows(again.delta)).toEqual(['A .gitignore +2 -0']);
  });

  test('a git workspace walked alone: deleting its .gitignore reports only it', async () => {
    const repo = createTempRepo({ files: { '.gitignore': 'secret.env\nout/\n', 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    repo.write('secret.env', 'TOKEN=1\n');
    repo.write('out/bundle.txt', 'bundle\n');
    await settle();
    const { delta } = await runChange(walker, repo.dir, () => fs.rmSync(path.join(repo.dir, '.gitignore')));
    expect(rows(delta)).toEqual(['D .gitignore +0 -2']);
    // Adding it back: the files it ignores again stood unchanged at both ends.
    const written = await runChange(walker, repo.dir, () => {
      repo.write('.gitignore', 'secret.env\nout/\n');
    });
    expect(rows(written.delta)).toEqual(['A .gitignore +2 -0']);
  });
});
