import path from 'node:path';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { createTempRepo } from '../test-support/temp-repo.ts';
import { resolved, rows, runChange, testEngine } from '../test-support/engine-harness.ts';

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of closers) await c();
});
const engineWith = (...args: Parameters<typeof testEngine>) => {
  const e = testEngine(...args);
  closers.push(() => e.close());
  return e;
};

describe('registry', () => {
  test('B6: two overlapping runs each get their own whole delta, both flagged overlapping', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n', 'sub/b.txt': 'b\n' } });
    onTestFinished(() => repo.cleanup());
    const e = engineWith();
    await e.start({ sessionId: 's1', changeId: 'run:A', runId: 'A', workspace: await resolved(repo.dir) });
    repo.write('a.txt', 'a by A\n');
    await e.start({
      sessionId: 's2',
      changeId: 'run:B',
      runId: 'B',
      workspace: await resolved(path.join(repo.dir, 'sub')),
    });
    repo.write('sub/b.txt', 'b by B\n');
    const a = await e.complete('s1', 'run:A');
    const b = await e.complete('s2', 'run:B');
    expect(rows(a!)).toEqual(['M a.txt +1 -1', 'M sub/b.txt +1 -1']);
    expect(rows(b!)).toEqual(['M b.txt +1 -1']);
    expect(a!.overlapping).toBe(true);
    expect(b!.overlapping).toBe(true);
    // A later run alone is not overlapping.
    const alone = await runChange(e, repo.dir, () => repo.write('a.txt', 'again\n'));
    expect(alone.delta.overlapping).toBe(false);
  });

  test('B6: a run and its own tool calls never make each other overlapping; unrelated folders never overlap', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    const other = createTempRepo({ files: { 'x.txt': 'x\n' } });
    onTestFinished(() => other.cleanup());
    const e = engineWith();
    const ws = await resolved(repo.dir);
    await e.start({ sessionId: 's', changeId: 'run:R', runId: 'R', workspace: ws });
    await e.start({ sessionId: 's', changeId: 'tool:T1', runId: 'R', workspace: ws });
    await e.start({ sessionId: 's', changeId: 'run:O', runId: 'O', workspace: await resolved(other.dir) });
    repo.write('a.txt', 'tool edit\n');
    const tool = await e.complete('s', 'tool:T1');
    const run = await e.complete('s', 'run:R');
    expect(rows(tool!)).toEqual(['M a.txt +1 -1']);
    expect(rows(run!)).toEqual(['M a.txt +1 -1']);
    expect(tool!.overlapping).toBe(false);
    expect(run!.overlapping).toBe(false);
    expect((await e.complete('s', 'run:O'))!.overlapping).toBe(false);
  });

  test('a kept completion answers the same delta until dropped, and does not make a later run overlapping', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    const e = engineWith();
    const ws = await resolved(repo.dir);
    await e.start({ sessionId: 's', changeId: 'run:K', runId: 'K', workspace: ws });
    repo.write('b.txt', 'b\n');
    const first = await e.completeKept('s', 'run:K');
    expect(rows(first!)).toEqual(['A b.txt +1 -0']);
    expect(e.has('s', 'run:K')).toBe(true);
    // Edits after the completion are not part of it: a retry gets the delta that was computed.
    repo.write('c.txt', 'c\n');
    expect(await e.completeKept('s', 'run:K')).toBe(first);
    const later = await runChange(e, repo.dir, () => repo.write('a.txt', 'later\n'));
    expect(later.delta.overlapping).toBe(false);
    e.drop('s', 'run:K');
    expect(e.has('s', 'run:K')).toBe(false);
    expect(await e.completeKept('s', 'run:K')).toBeNull();
  });

  test('B20: a repeated start answers as the first; completion drops the checkpoint; unknown keys answer null', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    const e = engineWith();
    const ws = await resolved(repo.dir);
    const first = await e.start({ sessionId: 's', changeId: 'run:1', runId: '1', workspace: ws });
    repo.write('b.txt', 'b\n');
    const again = await e.start({ sessionId: 's', changeId: 'run:1', runId: '1', workspace: ws });
    expect(again).toBe(first);
    const [c1, c2] = await Promise.all([e.complete('s', 'run:1'), e.complete('s', 'run:1')]);
    expect(c1).toBe(c2);
    expect(rows(c1!)).toEqual(['A b.txt +1 -0']);
    expect(e.has('s', 'run:1')).toBe(false);
    expect(await e.complete('s', 'run:1')).toBeNull();
    expect(await e.peek('s', 'never')).toBeNull();
    await e.start({ sessionId: 's', changeId: 'run:2', runId: '2', workspace: ws });
    e.drop('s', 'run:2');
    expect(await e.complete('s', 'run:2')).toBeNull();
  });

  test('B20: a checkpoint past its TTL is swept even while a progress peek is reading it', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    let clock = 1_000_000;
    const e = engineWith({ checkpointTtlMs: 1_000 }, { now: () => clock });
    await e.start({ sessionId: 's', changeId: 'run:P', runId: 'P', workspace: await resolved(repo.dir) });
    const peek = e.peek('s', 'run:P'); // in flight: the live feed's catch-up does this on its own
    clock += 1_000;
    expect(e.sweep()).toEqual([{ sessionId: 's', changeId: 'run:P' }]);
    expect(e.has('s', 'run:P')).toBe(false);
    expect(await peek).not.toBeNull(); // the peek that was reading still gets its answer
    expect(await e.complete('s', 'run:P')).toBeNull();
  });

  test("B20: the TTL counts from the run's last event (fake clock)", async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    let clock = 1_000_000;
    const e = engineWith({ checkpointTtlMs: 1_000 }, { now: () => clock });
    const ws = await resolved(repo.dir);
    await e.start({ sessionId: 's', changeId: 'run:R', runId: 'R', workspace: ws });
    await e.start({ sessionId: 's', changeId: 'tool:T', runId: 'R', workspace: ws });
    await e.start({ sessionId: 's', changeId: 'run:Q', runId: 'Q', workspace: ws });
    clock += 999;
    expect(e.sweep()).toEqual([]);
    e.touch('s', 'R'); // an event of run R refreshes its run and tool checkpoints
    clock += 1;
    expect(e.sweep()).toEqual([{ sessionId: 's', changeId: 'run:Q' }]);
    clock += 998;
    expect(e.sweep()).toEqual([]);
    clock += 1;
    expect(
      e
        .sweep()
        .map((k) => k.changeId)
        .sort(),
    ).toEqual(['run:R', 'tool:T']);
    expect(await e.complete('s', 'run:R')).toBeNull();
  });

  test('B19: the global memory cap evicts the oldest idle checkpoint to make room', async () => {
    const a = createTempRepo({ git: false, files: { 'a.txt': 'x'.repeat(60) } });
    const b = createTempRepo({ git: false, files: { 'b.txt': 'y'.repeat(60) } });
    const c = createTempRepo({ git: false, files: { 'c.txt': 'z'.repeat(30) } });
    let clock = 0;
    const e = engineWith({ maxCheckpointMemoryBytes: 100 }, { now: () => clock });
    await e.start({ sessionId: 's', changeId: 'run:A', runId: 'A', workspace: await resolved(a.dir) });
    clock = 10;
    await e.start({ sessionId: 's', changeId: 'run:C', runId: 'C', workspace: await resolved(c.dir) });
    expect(e.memoryBytes()).toBe(90);
    clock = 20;
    e.touch('s', 'A'); // A is now more recent than C
    await e.start({ sessionId: 's', changeId: 'run:B', runId: 'B', workspace: await resolved(b.dir) });
    // C (idle longest) went first; A still had to go to fit B's 60 bytes.
    expect(e.has('s', 'run:C')).toBe(false);
    expect(e.has('s', 'run:A')).toBe(false);
    expect(e.memoryBytes()).toBe(60);
    expect(e.memoryBytes()).toBeLessThanOrEqual(100);
    expect(await e.complete('s', 'run:A')).toBeNull();
    b.write('b.txt', 'changed\n');
    expect(rows((await e.complete('s', 'run:B'))!)).toEqual(['M b.txt +1 -1']);
    expect(e.memoryBytes()).toBe(0);
    for (const r of [a, b, c]) r.cleanup();
  });

  test('B19: eviction keeps the newer checkpoint when evicting the older one is enough', async () => {
    const a = createTempRepo({ git: false, files: { 'a.txt': 'x'.repeat(40) } });
    const b = createTempRepo({ git: false, files: { 'b.txt': 'y'.repeat(40) } });
    const c = createTempRepo({ git: false, files: { 'c.txt': 'z'.repeat(40) } });
    let clock = 0;
    const e = engineWith({ maxCheckpointMemoryBytes: 100 }, { now: () => clock++ });
    for (const [id, r] of [
      ['A', a],
      ['B', b],
      ['C', c],
    ] as const) {
      await e.start({ sessionId: 's', changeId: `run:${id}`, runId: id, workspace: await resolved(r.dir) });
    }
    expect([e.has('s', 'run:A'), e.has('s', 'run:B'), e.has('s', 'run:C')]).toEqual([false, true, true]);
    expect(e.memoryBytes()).toBe(80);
    for (const r of [a, b, c]) r.cleanup();
  });

  test('B18: the in-thread scan fallback gives the same answers as the worker', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n', 'b.txt': 'b\n' } });
    onTestFinished(() => repo.cleanup());
    const e = engineWith({}, { inThread: true });
    const { delta } = await runChange(e, repo.dir, () => {
      repo.write('a.txt', 'A\n');
      repo.rm('b.txt');
    });
    expect(rows(delta)).toEqual(['M a.txt +1 -1', 'D b.txt +0 -1']);
  });
});
