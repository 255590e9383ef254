import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../config.ts';
import { createTempDir } from '../test-support/temp-repo.ts';
import { FAULTY_READ_MESSAGE, FAULTY_SCAN_WORKER, FAULTY_WALK_MESSAGE } from '../test-support/faulty-scan.ts';
import { resolveWorkspace } from '../workspace/index.ts';
import { createEngine } from './registry.ts';
import type { CheckpointEngine } from './types.ts';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A plain folder, and an engine over the faulty worker that logs into `lines`. */
async function setup(): Promise<{
  dir: string;
  engine: CheckpointEngine;
  lines: string[];
  start: () => Promise<unknown>;
}> {
  const dir = createTempDir();
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  const lines: string[] = [];
  const engine = createEngine({
    limits: DEFAULT_LIMITS,
    dbPath: null,
    log: (m) => lines.push(m),
    scanner: { workerUrl: FAULTY_SCAN_WORKER },
  });
  cleanups.push(() => engine.close());
  const ws = await resolveWorkspace(dir, { workspaceRoots: null, homeDir: '/nonexistent-home' });
  if (!ws.ok) throw new Error(`workspace refused: ${ws.reason}`);
  const start = () => engine.start({ sessionId: 's1', changeId: 'run:r1', runId: 'r1', workspace: ws });
  return { dir, engine, lines, start };
}

describe('engine failures are logged with their cause', () => {
  it('control: over the same worker without a fault, the change is found and nothing is logged', async () => {
    const { dir, engine, lines, start } = await setup();
    await start();
    fs.writeFileSync(path.join(dir, 'a.txt'), 'changed\n');
    const d = await engine.complete('s1', 'run:r1');
    expect(d?.files.map((f) => f.path)).toEqual(['a.txt']);
    expect(d?.truncated_reasons).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('a completion whose read throws answers degraded and logs the cause with session, change id and workspace', async () => {
    const { dir, engine, lines, start } = await setup();
    await start();
    fs.writeFileSync(path.join(dir, 'a.txt'), 'changed\n');
    fs.writeFileSync(path.join(dir, 'fail-read'), '');
    const d = await engine.complete('s1', 'run:r1');
    expect(d).toMatchObject({ truncated: true, truncated_reasons: ['degraded'], files: [] });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^delta failed/);
    expect(lines[0]).toContain(FAULTY_READ_MESSAGE);
    expect(lines[0]).toContain('session "s1"');
    expect(lines[0]).toContain('change "run:r1"');
    expect(lines[0]).toContain(`workspace ${JSON.stringify(dir)}`);
  });

  it('a checkpoint whose read throws says degraded and logs the cause with session, change id and workspace', async () => {
    const { dir, lines, start } = await setup();
    fs.writeFileSync(path.join(dir, 'fail-read'), '');
    expect(await start()).toMatchObject({ truncated: true, truncated_reasons: ['degraded'] });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^checkpoint read failed/);
    expect(lines[0]).toContain(FAULTY_READ_MESSAGE);
    expect(lines[0]).toContain('session "s1"');
    expect(lines[0]).toContain('change "run:r1"');
    expect(lines[0]).toContain(`workspace ${JSON.stringify(dir)}`);
  });

  it('a checkpoint whose walk throws says degraded and logs the cause with session, change id and workspace', async () => {
    const { dir, lines, start } = await setup();
    fs.writeFileSync(path.join(dir, 'fail-scan'), '');
    expect(await start()).toMatchObject({ scanned_files: 0, truncated: true, truncated_reasons: ['degraded'] });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^checkpoint walk failed/);
    expect(lines[0]).toContain(FAULTY_WALK_MESSAGE);
    expect(lines[0]).toContain(`workspace ${JSON.stringify(dir)}`);
  });

  it('a checkpoint whose walk answers garbage answers degraded and logs the cause with session, change id and workspace', async () => {
    const { dir, lines, start } = await setup();
    fs.writeFileSync(path.join(dir, 'bad-scan'), '');
    expect(await start()).toMatchObject({ scanned_files: 0, truncated: true, truncated_reasons: ['degraded'] });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^checkpoint failed/);
    expect(lines[0]).toMatch(/TypeError/);
    expect(lines[0]).toContain('session "s1"');
    expect(lines[0]).toContain('change "run:r1"');
    expect(lines[0]).toContain(`workspace ${JSON.stringify(dir)}`);
  });
});
