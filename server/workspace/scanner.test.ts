import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BLOCKING_SCAN_WORKER, createTempDir, plantBlockingFifo, unblockFifo } from '../test-support/index.ts';
import { IDENTIFIED_SCAN_WORKER } from '../test-support/identified-scan.ts';
import { createScanner, ScanDeadlineError, ScanWorkerError, type ScanRequest, type Scanner } from './index.ts';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const temp = (files: Record<string, string> = { 'a.txt': 'a\n' }): string => {
  const d = createTempDir();
  for (const [k, v] of Object.entries(files)) fs.writeFileSync(path.join(d, k), v);
  cleanups.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
};

const request = (root: string): ScanRequest => ({
  root,
  starts: [''],
  pruneDirs: [],
  skipFiles: [],
  mode: 'filesystem',
  gitignoreText: null,
  maxFiles: 1000,
  timeoutMs: 60_000,
});

/** A folder whose walk blocks in a real system call in the test worker, released after the test. */
const stuckFolder = (): string => {
  const d = temp();
  const fifo = plantBlockingFifo(d);
  cleanups.push(() => unblockFifo(fifo));
  return d;
};

const scannerWith = (deadlines: Map<string, number>, extra: { maxWorkers?: number } = {}): Scanner => {
  const s = createScanner({
    workerUrl: BLOCKING_SCAN_WORKER,
    deadlineMs: (_op, req) => deadlines.get(req.root) ?? 600_000,
    ...extra,
  });
  // Registered first, run last: the FIFOs are released before the scanner waits for its workers.
  cleanups.unshift(() => s.close());
  return s;
};

describe('scan worker pool', () => {
  it('a walk blocked in a system call fails at its hard deadline, and the next walk gets a fresh worker', async () => {
    const stuck = stuckFolder();
    const fine = temp();
    const scanner = scannerWith(new Map([[stuck, 50]]));
    await expect(scanner.scan(request(stuck))).rejects.toBeInstanceOf(ScanDeadlineError);
    // terminate() cannot interrupt the blocked open: the worker is counted as stuck, not reused.
    expect(scanner.stuck()).toBe(1);
    const t = await scanner.scan(request(fine));
    expect(t.paths).toEqual(['a.txt']);
    expect(t.truncated).toBeNull();
  });

  it('control: the test worker really blocks the walk until the FIFO is opened for writing', async () => {
    const stuck = temp();
    const fifo = plantBlockingFifo(stuck);
    const scanner = scannerWith(new Map());
    let done = false;
    const walk = scanner.scan(request(stuck)).finally(() => (done = true));
    // Answers arrive only after release: a walk of a one-file folder otherwise answers at once.
    const fine = temp();
    await scanner.scan(request(fine));
    expect(done).toBe(false);
    unblockFifo(fifo);
    await expect(walk).resolves.toMatchObject({ paths: ['a.txt'] });
  });

  it('a walk stuck on workspace A does not delay a walk of workspace B', async () => {
    const stuck = stuckFolder();
    const other = temp({ 'b.txt': 'b\n' });
    // A's deadline is far away: B must not wait for it.
    const scanner = scannerWith(new Map());
    let aDone = false;
    const a = scanner.scan(request(stuck)).then(
      () => (aDone = true),
      () => (aDone = true),
    );
    const b = await scanner.scan(request(other));
    expect(b.paths).toEqual(['b.txt']);
    expect(aDone).toBe(false);
    void a;
  });

  it('with one worker (the old design), a stuck walk holds every other walk back (control for the pool)', async () => {
    const stuck = stuckFolder();
    const other = temp({ 'b.txt': 'b\n' });
    const scanner = scannerWith(new Map([[stuck, 300]]), { maxWorkers: 1 });
    const order: string[] = [];
    const a = scanner.scan(request(stuck)).catch(() => order.push('A failed'));
    const b = scanner.scan(request(other)).then(() => order.push('B answered'));
    await Promise.all([a, b]);
    expect(order).toEqual(['A failed', 'B answered']);
  });

  it('a worker that dies fails its call; the walk is never re-run on the main thread', async () => {
    const crash = temp({ 'exit-worker': '' });
    const scanner = scannerWith(new Map());
    await expect(scanner.scan(request(crash))).rejects.toBeInstanceOf(ScanWorkerError);
    // The next call still gets an answer, from a new worker.
    const fine = temp();
    await expect(scanner.scan(request(fine))).resolves.toMatchObject({ paths: ['a.txt'] });
  });

  it('too many stuck workers: new calls fail at once instead of starting more threads', async () => {
    const stuck = stuckFolder();
    const scanner = createScanner({ workerUrl: BLOCKING_SCAN_WORKER, deadlineMs: () => 30, maxStuck: 1 });
    cleanups.unshift(() => scanner.close());
    await expect(scanner.scan(request(stuck))).rejects.toBeInstanceOf(ScanDeadlineError);
    await expect(scanner.scan(request(temp()))).rejects.toBeInstanceOf(ScanWorkerError);
  });

  it('a released stuck worker exits and stops counting as stuck', async () => {
    const d = temp();
    const fifo = plantBlockingFifo(d);
    const scanner = scannerWith(new Map([[d, 30]]));
    await expect(scanner.scan(request(d))).rejects.toBeInstanceOf(ScanDeadlineError);
    expect(scanner.stuck()).toBe(1);
    unblockFifo(fifo);
    await vi.waitFor(() => expect(scanner.stuck()).toBe(0), { timeout: 10_000 });
  });

  it('a call made while its worker is still starting keeps the process alive until it answers', async () => {
    // A script with nothing else to do: the process would end before the answer if the starting
    // worker did not hold the event loop open for the waiting call.
    const dir = temp({ 'x.txt': 'x\n' });
    const script = path.join(dir, 'scan-once.mts');
    const scanner = new URL('./scanner.ts', import.meta.url).href;
    fs.writeFileSync(
      script,
      `import { createScanner } from ${JSON.stringify(scanner)};\n` +
        `const t = await createScanner().scan(${JSON.stringify(request(dir))});\n` +
        `process.stdout.write('answered ' + t.paths.join(','));\n`,
    );
    const tsx = new URL('../../bin/tsx.js', import.meta.url).pathname;
    const child = spawn(process.execPath, [tsx, script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(out).toBe('answered scan-once.mts,x.txt');
    expect(code).toBe(0);
  });
});

describe('idle workers handed on (reuseWorkers)', () => {
  const threadOf = async (scanner: Scanner, root: string) =>
    ((await scanner.scan(request(root))) as unknown as { threadId: number }).threadId;
  const identified = (reuseWorkers: boolean) => {
    const s = createScanner({ workerUrl: IDENTIFIED_SCAN_WORKER, reuseWorkers, maxWorkers: 1 });
    cleanups.unshift(() => s.close());
    return s;
  };

  it('a closed scanner leaves its idle worker to the next scanner of the same module', async () => {
    const dir = temp();
    const first = identified(true);
    const thread = await threadOf(first, dir);
    await first.close();
    const next = identified(true);
    expect(await threadOf(next, dir)).toBe(thread);
    // Handed on once: a second scanner open at the same time starts a worker of its own.
    const third = identified(true);
    expect(await threadOf(third, dir)).not.toBe(thread);
  });

  it('without it the worker ends with its scanner, and a worker of another module is never taken', async () => {
    const dir = temp();
    const plain = identified(false);
    const thread = await threadOf(plain, dir);
    await plain.close();
    const next = identified(true);
    expect(await threadOf(next, dir)).not.toBe(thread);
    await next.close();
    // The real worker module's scanner gets a real walk, not the identified worker just kept.
    const real = createScanner({ reuseWorkers: true });
    cleanups.unshift(() => real.close());
    expect((await real.scan(request(dir))).paths).toEqual(['a.txt']);
  });
});
