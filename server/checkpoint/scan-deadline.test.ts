import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../config.ts';
import { BLOCKING_SCAN_WORKER, createTempDir, plantBlockingFifo, unblockFifo } from '../test-support/index.ts';
import { createEngine } from './registry.ts';
import { resolved, testEngine } from '../test-support/engine-harness.ts';
import type { CheckpointEngine } from './types.ts';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const temp = (files: Record<string, string>): string => {
  const d = createTempDir();
  for (const [k, v] of Object.entries(files)) fs.writeFileSync(path.join(d, k), v);
  cleanups.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
};

/** An engine whose walks of `stuck` block in a real system call; their hard deadline is `stuckMs`. */
const engineWithStuck = (stuck: string, stuckMs: number): CheckpointEngine => {
  const engine = createEngine({
    limits: DEFAULT_LIMITS,
    dbPath: null,
    scanner: { workerUrl: BLOCKING_SCAN_WORKER, deadlineMs: (_op, req) => (req.root === stuck ? stuckMs : 600_000) },
  });
  // Registered before the FIFO's release, so it runs after it.
  cleanups.push(() => engine.close());
  return engine;
};

const start = async (engine: CheckpointEngine, dir: string, id: string) =>
  engine.start({ sessionId: 's', changeId: id, runId: id, workspace: await resolved(dir) });

describe('scan deadlines', () => {
  it('a checkpoint whose walk blocks answers scan_time at its deadline, and its completion claims nothing', async () => {
    const dir = temp({ 'a.txt': 'a\n' });
    const engine = engineWithStuck(fs.realpathSync(dir), 50);
    const fifo = plantBlockingFifo(dir);
    cleanups.push(() => unblockFifo(fifo));
    const r = await start(engine, dir, 'c1');
    expect(r).toMatchObject({ scanned_files: 0, truncated: true, truncated_reasons: ['scan_time'] });
    // The walk saw nothing, so nothing is reported as added or deleted at completion either.
    unblockFifo(fifo);
    fs.writeFileSync(path.join(dir, 'new.txt'), 'n\n');
    const d = await engine.complete('s', 'c1');
    expect(d?.files).toEqual([]);
    expect(d?.truncated_reasons).toContain('scan_time');
  });

  it("a checkpoint stuck on workspace A does not delay workspace B's checkpoint", async () => {
    const a = temp({ 'a.txt': 'a\n' });
    const b = temp({ 'b.txt': 'b\n' });
    const engine = engineWithStuck(fs.realpathSync(a), 600_000);
    const fifo = plantBlockingFifo(a);
    cleanups.push(() => unblockFifo(fifo));
    let aAnswered = false;
    const first = start(engine, a, 'a1').finally(() => (aAnswered = true));
    const second = await start(engine, b, 'b1');
    expect(second).toMatchObject({ scanned_files: 1, truncated: false });
    expect(aAnswered).toBe(false);
    unblockFifo(fifo);
    // Released, A answers too. Its count may include the test's FIFO marker, depending on whether
    // the walk lists the folder before the release removes it, so only the answer is checked.
    await expect(first).resolves.toMatchObject({ truncated: false });
  });

  it('a FIFO named .gitignore in a plain folder does not block the checkpoint', async () => {
    const dir = temp({ 'a.txt': 'a\n' });
    execFileSync('mkfifo', [path.join(dir, '.gitignore')]);
    const engine = testEngine();
    cleanups.push(() => engine.close());
    expect(await start(engine, dir, 'g1')).toMatchObject({ scanned_files: 1, truncated: false });
  });
});
