import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createTempDir } from '../test-support/index.ts';
import { rows, runChange, testEngine } from '../test-support/engine-harness.ts';

/** The root `.gitignore` of a non-git workspace is read like any workspace file. */

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function layout() {
  const base = createTempDir('rundiff-gitignore-read-');
  cleanups.push(() => fs.rmSync(base, { recursive: true, force: true }));
  const ws = path.join(base, 'ws');
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(base, 'outside-rules'), '*.txt\n');
  fs.writeFileSync(path.join(ws, 'a.txt'), 'one\n');
  const engine = testEngine();
  cleanups.push(() => void engine.close());
  return { base, ws, engine };
}

it('a root .gitignore in the workspace applies (control for the two cases below)', async () => {
  const { ws, engine } = layout();
  fs.writeFileSync(path.join(ws, '.gitignore'), '*.txt\n');
  const { delta } = await runChange(engine, ws, () => fs.writeFileSync(path.join(ws, 'a.txt'), 'two\n'));
  expect(rows(delta)).toEqual([]);
});

it('a root .gitignore that is a symlink to a file outside the workspace is not followed', async () => {
  const { base, ws, engine } = layout();
  fs.symlinkSync(path.join(base, 'outside-rules'), path.join(ws, '.gitignore'));
  expect(fs.readFileSync(path.join(ws, '.gitignore'), 'utf8')).toBe('*.txt\n'); // control: by name it is read
  const { delta } = await runChange(engine, ws, () => fs.writeFileSync(path.join(ws, 'a.txt'), 'two\n'));
  expect(rows(delta)).toEqual(['M a.txt +1 -1']);
});

it('a root .gitignore that is a FIFO does not block the checkpoint', async () => {
  const { ws, engine } = layout();
  execFileSync('mkfifo', [path.join(ws, '.gitignore')]);
  expect(fs.statSync(path.join(ws, '.gitignore')).isFIFO()).toBe(true);
  const { delta } = await runChange(engine, ws, () => fs.writeFileSync(path.join(ws, 'a.txt'), 'two\n'));
  expect(rows(delta)).toEqual(['M a.txt +1 -1']);
});
