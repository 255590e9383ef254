/**
 * Edge to centre (`npm run bench -- edge`), measured in the same run on the same machine:
 *  1. the outbox's cost on SQLite writes: storing changes (50 files each, with kept contents) on a
 *     database of its own (no outbox triggers: a single user's, as before edges existed) and on one
 *     attached to an upstream (an edge), as a ratio;
 *  2. ingest throughput: an edge holding N stored changes sends them to a centre on SQLite and on
 *     PostgreSQL (a throwaway server from Debian's packages): changes acknowledged per second.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { deflateSync } from 'node:zlib';
import { resolveConfig } from '../server/config.ts';
import { createServer, type RunningServer } from '../server/main.ts';
import {
  openStore,
  type NewChange,
  type NewFile,
  type PendingContent,
  type SqliteStore,
} from '../server/store/index.ts';
import { createTestDatabase } from '../server/test-support/postgres.ts';
import { modifiedChange, modifiedFile } from '../server/test-support/store-fixtures.ts';

const FILES = 50;
const TOKEN = 'bench-edge-token-0123456789';

function change(sessionId: string, i: number): { change: NewChange; files: NewFile[] } {
  const files = Array.from({ length: FILES }, (_, f) =>
    modifiedFile(`src/m${String(f).padStart(2, '0')}.ts`, `@@ -1 +1 @@\n-old ${i}\n+new ${i}\n`.repeat(8), 8, {
      size_before: 100,
      size_after: 100,
    }),
  );
  return modifiedChange(sessionId, `r${i}`, Date.now() - 10_000 + i, files, {
    workspace: '/bench',
    workspace_kind: 'filesystem',
    started_at: 1000 + i,
    finished_at: 2000 + i,
  });
}

/** Stores `n` changes in sessions of 20, each file with an after content; resolves with the ms taken. */
async function storeChanges(store: SqliteStore, n: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const sessionId = `s${Math.floor(i / 20)}`;
    await store.sessions.touch(sessionId, 1000 + i);
    const { change: c, files } = change(sessionId, i);
    await store.transaction(async (tx) => {
      await tx.changes.insert(c, files, 1000);
      const contents = files.map((_, f) => {
        const raw = Buffer.from(`content ${i} ${f}\n`.repeat(20));
        const sha256 = createHash('sha256').update(raw).digest('hex');
        return {
          before: { mode: null },
          after: { mode: '100644', sha256, size: raw.length, codec: 'deflate' as const, data: deflateSync(raw) },
        };
      });
      const pending = await tx.contents.record(sessionId, c.change_id, contents);
      await tx.contents.fill(pending as PendingContent[], 1 << 30, 3000);
    });
  }
  return performance.now() - started;
}

function tempDb(dir: string, name: string): string {
  return path.join(dir, name, 'r.db');
}

export interface EdgeBenchResult {
  changes: number;
  writeMs: { detached: number; attached: number };
  ingest: { engine: string; changes: number; seconds: number; changesPerSec: number }[];
}

async function drain(edge: RunningServer): Promise<void> {
  for (;;) {
    const s = await edge.shipper!.status();
    if (s.pending_entries === 0) return;
    if (s.last_error && /refused|invalid|conflict/.test(s.last_error)) throw new Error(s.last_error);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function benchEdge(opts: { changes?: number } = {}): Promise<EdgeBenchResult> {
  const n = opts.changes ?? 200;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-edge-'));
  try {
    // 1. Write cost. Each variant on its own file; the order alternates so neither profits from a warm cache.
    const variant = async (name: string, prepare: (s: SqliteStore) => Promise<void>) => {
      const s = openStore(tempDb(dir, name));
      await prepare(s);
      const ms = await storeChanges(s, n);
      await s.close();
      return ms;
    };
    const attach = async (s: SqliteStore) => void (await s.outbox!.attach());
    // Two rounds, interleaved; the faster of each variant counts (the machine is shared).
    let detached = Infinity;
    let attached = Infinity;
    for (const round of [1, 2]) {
      detached = Math.min(detached, await variant(`detached-${round}`, async () => {}));
      attached = Math.min(attached, await variant(round === 1 ? 'attached' : 'attached-2', attach));
    }

    // 2. Ingest: the attached edge database (n changes in its outbox) sent to a fresh centre.
    const ingest: EdgeBenchResult['ingest'] = [];
    const pgDb = await createTestDatabase().catch(() => null);
    const centres: [string, Record<string, string>][] = [['sqlite', {}]];
    if (pgDb) centres.push(['postgres', { RUNDIFF_DATABASE_URL: pgDb.url }]);
    for (const [engine, env] of centres) {
      const edgeFile = tempDb(dir, `edge-${engine}`);
      fs.mkdirSync(path.dirname(edgeFile), { recursive: true });
      fs.copyFileSync(tempDb(dir, 'attached'), edgeFile);
      const centre = await createServer(
        resolveConfig(
          { port: 0, db: tempDb(dir, `centre-${engine}`) },
          { HOME: os.homedir(), RUNDIFF_EDGE_TOKENS: `bench=${TOKEN}`, ...env },
        ),
        { log: () => {} },
      );
      const started = performance.now();
      const edge = await createServer(
        resolveConfig(
          { port: 0, db: edgeFile, upstream: centre.url },
          { HOME: os.homedir(), RUNDIFF_UPSTREAM_TOKEN: TOKEN },
        ),
        { log: () => {}, shipper: { idleMs: 10 } },
      );
      await drain(edge);
      const seconds = (performance.now() - started) / 1000;
      ingest.push({ engine, changes: n, seconds, changesPerSec: n / seconds });
      await edge.close();
      await centre.close();
    }
    await pgDb?.drop();
    return { changes: n, writeMs: { detached, attached }, ingest };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function formatEdgeBench(r: EdgeBenchResult): string {
  const w = r.writeMs;
  return [
    `edge: storing ${r.changes} changes x ${FILES} files with contents (SQLite): a database of its own ${w.detached.toFixed(0)} ms,` +
      ` attached to an upstream ${w.attached.toFixed(0)} ms (x${(w.attached / w.detached).toFixed(2)})`,
    ...r.ingest.map(
      (i) =>
        `edge: ingest into a centre on ${i.engine}: ${i.changes} changes in ${i.seconds.toFixed(2)} s = ${i.changesPerSec.toFixed(0)} changes/s`,
    ),
  ].join('\n');
}
