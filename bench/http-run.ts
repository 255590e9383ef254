import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { resolveConfig } from '../server/config.ts';
import { createServer, type RunningServer } from '../server/main.ts';

/**
 * The whole server on a benchmark tree: `run.started` and `run.completed` over HTTP (the answers an
 * agent waits for), in this process, with default settings and a fresh database.
 */

export interface BenchServer {
  server: RunningServer;
  close(): Promise<void>;
}

export async function startBenchServer(): Promise<BenchServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-http-'));
  const config = resolveConfig({ port: 0, db: path.join(dir, 'bench.db') }, { HOME: os.homedir() });
  const server = await createServer(config, { log: () => {} });
  return {
    server,
    close: async () => {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function post(server: RunningServer, event: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}/api/bridge/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
  });
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** One timed run over HTTP: `change` edits the tree and returns its undo (run after the contents are written). */
export async function httpRun(
  b: BenchServer,
  workspace: string,
  runId: string,
  change: () => () => void,
): Promise<{ checkpointMs: number; completionMs: number; counts: string }> {
  const t0 = performance.now();
  await post(b.server, { type: 'run.started', session_id: 'bench', run_id: runId, workspace });
  const t1 = performance.now();
  const undo = change();
  const t2 = performance.now();
  const done = await post(b.server, { type: 'run.completed', session_id: 'bench', run_id: runId });
  const t3 = performance.now();
  await b.server.bridge.contentsSettled('bench');
  undo();
  const files = (done.files ?? []) as { change_type: string }[];
  const n = (t: string) => files.filter((f) => f.change_type === t).length;
  const counts = `${n('modified')}/${n('added')}/${n('deleted')}/${n('renamed')}`;
  return { checkpointMs: t1 - t0, completionMs: t3 - t2, counts: done.truncated ? `${counts} truncated` : counts };
}
