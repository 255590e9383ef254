import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createTempDir } from '../test-support/index.ts';
import { createWatchBudget, systemWatchLimit, watchBudgetSize } from './watch-budget.ts';

describe('folder watch budget', () => {
  it('is the configured cap, lowered to a quarter of the system limit editors and other tools share', () => {
    expect(watchBudgetSize(20_000, 192_536)).toBe(20_000);
    expect(watchBudgetSize(20_000, 8_192)).toBe(2_048);
    expect(watchBudgetSize(20_000, null)).toBe(20_000);
  });

  it('reads the system limit from its file, and says null where there is none', () => {
    const dir = createTempDir();
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.writeFileSync(path.join(dir, 'max_user_watches'), '65536\n');
    expect(systemWatchLimit(path.join(dir, 'max_user_watches'))).toBe(65_536);
    expect(systemWatchLimit(path.join(dir, 'absent'))).toBeNull();
    fs.writeFileSync(path.join(dir, 'garbage'), 'many\n');
    expect(systemWatchLimit(path.join(dir, 'garbage'))).toBeNull();
  });

  it('a spent budget refuses the next watch until one is released', () => {
    const b = createWatchBudget(2);
    expect([b.take(), b.take(), b.take()]).toEqual([true, true, false]);
    expect(b.held()).toBe(2);
    b.release(1);
    expect(b.take()).toBe(true);
    b.release(5);
    expect(b.held()).toBe(0);
  });
});
