import type { Limits } from '../../shared/index.ts';
import { DEFAULT_LIMITS } from '../config.ts';
import { resolveWorkspace, type ResolvedWorkspace } from '../workspace/index.ts';
import { createEngine, type CheckpointEngine, type DeltaResult, type StartResult } from '../checkpoint/index.ts';
import type { CheckpointWatchOptions } from '../checkpoint/strategy.ts';
import { compiledScanWorker } from './compiled-cli.ts';

/** Test support: a real engine over a real folder, one run at a time. */

export async function resolved(dir: string): Promise<ResolvedWorkspace> {
  const ws = await resolveWorkspace(dir, { workspaceRoots: null, homeDir: '/nonexistent-home' });
  if (!ws.ok) throw new Error(`workspace refused: ${ws.reason}`);
  return ws;
}

export function testEngine(
  limits: Partial<Limits> = {},
  extra: {
    now?: () => number;
    dbPath?: string | null;
    inThread?: boolean;
    /** The checkpoint watchers on (with these bounds) or off; default: `RUNDIFF_WATCH_CHECKPOINTS=1` turns them on. */
    watch?: boolean | Partial<CheckpointWatchOptions>;
  } = {},
): CheckpointEngine {
  const watch = extra.watch ?? process.env.RUNDIFF_WATCH_CHECKPOINTS === '1';
  const workerUrl = compiledScanWorker();
  return createEngine({
    scanner: { reuseWorkers: true, ...(workerUrl ? { workerUrl } : {}) },
    limits: Object.freeze({ ...DEFAULT_LIMITS, ...limits }),
    dbPath: extra.dbPath ?? null,
    watchCheckpoints: watch !== false,
    ...(typeof watch === 'object' ? { watch } : {}),
    ...(extra.now ? { now: extra.now } : {}),
    ...(extra.inThread ? { inThread: true } : {}),
  });
}

let seq = 0;

/** Checkpoint, run `act`, complete: the delta of what `act` did. */
export async function runChange(
  engine: CheckpointEngine,
  dir: string,
  act: () => void | Promise<void>,
): Promise<{ start: StartResult; delta: DeltaResult }> {
  const id = `c${++seq}`;
  const start = await engine.start({ sessionId: 's', changeId: id, runId: id, workspace: await resolved(dir) });
  await act();
  const delta = await engine.complete('s', id);
  if (!delta) throw new Error('no checkpoint');
  return { start, delta };
}

/** Compact view of a delta's rows for assertions. */
export function rows(delta: DeltaResult): string[] {
  return delta.files.map((f) => {
    const head =
      f.change_type === 'renamed' ? `R ${f.old_path} -> ${f.path}` : `${f.change_type[0]!.toUpperCase()} ${f.path}`;
    return `${head} +${f.additions} -${f.deletions}${f.binary ? ' binary' : ''}${f.omitted_reason ? ` (${f.omitted_reason})` : ''}`;
  });
}
