import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

/**
 * The whole server on a benchmark tree, as a process of its own (`rundiff serve`, default settings,
 * a fresh database): `run.started` and `run.completed` over HTTP, the answers an agent waits for,
 * and the server's own resident memory (its peak, from the kernel).
 */

export interface BenchServer {
  url: string;
  /** The server process's peak resident memory so far (VmHWM), bytes. */
  peakRssBytes(): number;
  close(): Promise<void>;
}

const CLI = fileURLToPath(new URL('../bin/rundiff.js', import.meta.url));

export async function startBenchServer(): Promise<BenchServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-http-'));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNDIFF_')));
  const child: ChildProcess = spawn(
    process.execPath,
    [CLI, 'serve', '--port', '0', '--db', path.join(dir, 'bench.db')],
    { env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${text}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const m = /serving on (http:\/\/\S+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}): ${text}`));
    });
  });
  child.stderr!.resume();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let closing: Promise<void> | null = null;
  return {
    url,
    peakRssBytes: () => {
      const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return m ? Number(m[1]) * 1024 : 0;
    },
    close: () =>
      (closing ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
        fs.rmSync(dir, { recursive: true, force: true });
      })()),
  };
}

async function call(url: string, init?: RequestInit): Promise<Record<string, unknown>> {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

const post = (b: BenchServer, event: object) =>
  call(`${b.url}/api/bridge/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
  });

/** One timed run over HTTP: `change` edits the tree and returns its undo (run once the contents are written). */
export async function httpRun(
  b: BenchServer,
  workspace: string,
  runId: string,
  change: () => () => void,
): Promise<{ checkpointMs: number; completionMs: number; counts: string }> {
  const t0 = performance.now();
  await post(b, { type: 'run.started', session_id: 'bench', run_id: runId, workspace });
  const t1 = performance.now();
  const undo = change();
  const t2 = performance.now();
  const done = await post(b, { type: 'run.completed', session_id: 'bench', run_id: runId });
  const t3 = performance.now();
  const files = (done.files ?? []) as { id: string }[];
  // Reading a content waits for the change's contents to be written (they follow the answer).
  if (files[0])
    await call(
      `${b.url}/api/hermes/sessions/bench/workspace-run-changes/${encodeURIComponent(String(done.change_id))}/files/${files[0].id}/content?side=before`,
    );
  undo();
  // The answer lists the first page of rows; the session detail has the counts.
  const stored = (await call(
    `${b.url}/api/hermes/sessions/bench/workspace-run-changes/${encodeURIComponent(String(done.change_id))}`,
  )) as { change?: Record<string, unknown> };
  const c = stored.change ?? {};
  const counts = `${String(c.modified_count)}/${String(c.added_count)}/${String(c.deleted_count)}/${String(c.renamed_count)}`;
  return { checkpointMs: t1 - t0, completionMs: t3 - t2, counts: done.truncated ? `${counts} truncated` : counts };
}
