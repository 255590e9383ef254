import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../server/test-support/temp-repo.ts';
import { needsBuild } from './start.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function project(): { root: string; touch: (rel: string, secondsAgo: number) => void } {
  const root = createTempDir('rundiff-start-');
  dirs.push(root);
  const touch = (rel: string, secondsAgo: number) => {
    const abs = path.join(root, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    if (!fs.existsSync(abs)) fs.writeFileSync(abs, 'x');
    const t = new Date(Date.now() - secondsAgo * 1000);
    fs.utimesSync(abs, t, t);
  };
  return { root, touch };
}

describe('npm start: build when missing or stale', () => {
  it('builds when dist/web/index.html is missing', () => {
    const { root, touch } = project();
    touch('web/src/main.ts', 100);
    expect(needsBuild(root)).toBe(true);
  });

  it('skips the build when the built page is newer than every source', () => {
    const { root, touch } = project();
    touch('web/src/main.ts', 100);
    touch('shared/dto.ts', 100);
    touch('vite.config.ts', 100);
    for (const d of ['web/src', 'web', 'shared'])
      fs.utimesSync(path.join(root, d), new Date(Date.now() - 100_000), new Date(Date.now() - 100_000));
    touch('dist/web/index.html', 10);
    expect(needsBuild(root)).toBe(false);
  });

  it('rebuilds when a nested web, shared or vite.config.ts file is newer than the build', () => {
    for (const rel of ['web/src/components/X.vue', 'shared/socket.ts', 'vite.config.ts']) {
      const { root, touch } = project();
      touch('dist/web/index.html', 50);
      touch(rel, 1);
      expect(needsBuild(root), rel).toBe(true);
    }
  });
});
