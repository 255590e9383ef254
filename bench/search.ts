import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_LIMITS } from '../server/config.ts';
import { searchHistory } from '../server/runs/index.ts';
import { openStore, openStoreFrom, type NewFile, type Store } from '../server/store/index.ts';
import { startPostgres, type TestPostgres } from '../server/test-support/postgres.ts';

/**
 * `npm run bench -- search`: the history search over 10,000 runs and 500,000 file rows (100
 * sessions of 100 runs, each run a prompt, a reply, a tool call and a change of 50 files with a
 * small patch), stored through the store's own API so the indexing triggers run as they do in use.
 * Prints the store time, then each query's median and p95 over its rounds and the p95 over all of
 * them, on SQLite and (with `--postgres`, or RUNDIFF_BENCH_DATABASE_URL) on PostgreSQL
 * (`--postgres-only`: PostgreSQL alone). With RUNDIFF_BENCH_SEARCH_DB=FILE the SQLite file is kept
 * and, once filled, only measured again; so is the database RUNDIFF_BENCH_DATABASE_URL names.
 */

export interface SearchBenchOptions {
  sessions?: number;
  runsPerSession?: number;
  filesPerRun?: number;
  rounds?: number;
  postgres?: boolean;
  /** Skip SQLite (measure PostgreSQL alone). */
  sqlite?: boolean;
  log?: (line: string) => void;
}

export interface QueryFigure {
  query: string;
  hits: number;
  capped: boolean;
  medianMs: number;
  p95Ms: number;
}

export interface SearchBenchFigures {
  engine: string;
  runs: number;
  fileRows: number;
  storeS: number;
  queries: QueryFigure[];
  p95Ms: number;
}

const WORDS = ['alpha', 'render', 'compute', 'fetch', 'parse', 'format', 'update', 'value', 'index', 'token'];
const FOLDERS = ['src/components', 'src/stores', 'server/api', 'server/store', 'web/src/views', 'lib'];

/** A deterministic pseudo-random stream (the same data on every run). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function fileOf(run: number, i: number, r: () => number): NewFile {
  const w = (k: number) => WORDS[Math.floor(r() * WORDS.length)]! + String(k);
  const p = `${FOLDERS[i % FOLDERS.length]}/${w(i % 97)}-${run % 500}-${i}.ts`;
  const line = 10 + (i % 40);
  const removed = `-const ${w(run % 1000)} = ${w(i)}(${w(run % 77)});`;
  const added = `+const ${w(run % 1000)} = ${w(i)}(${w(run % 77)}, { retry: ${i % 5} });`;
  // One file in 2,000 holds a rare word, one run in 100 a phrase.
  const rare = (run * 50 + i) % 2000 === 7 ? '\n+// needleword: checked by hand' : '';
  const patch = `diff --git a/${p} b/${p}\n--- a/${p}\n+++ b/${p}\n@@ -${line},3 +${line},3 @@\n import { ${w(1)} } from './${w(2)}';\n${removed}\n${added}${rare}\n export default ${w(3)};\n`;
  return {
    path: p,
    old_path: null,
    change_type: 'modified',
    additions: 1,
    deletions: 1,
    binary: false,
    truncated: false,
    size_before: 400,
    size_after: 410,
    patch_bytes: Buffer.byteLength(patch),
    omitted_reason: null,
    patch,
  };
}

const sessionId = (s: number): string => `${s % 2 === 0 ? 'claude-code' : 'codex'}:session-${s}`;

/** Whether a kept database already holds the history (a former run stored its last session). */
const isFilled = (store: Store, sessions: number): Promise<boolean> => store.sessions.exists(sessionId(sessions - 1));

async function fill(
  store: Store,
  o: Required<Omit<SearchBenchOptions, 'log' | 'postgres' | 'sqlite'>>,
  log: (l: string) => void,
) {
  const r = rng(7);
  let at = 1_700_000_000_000;
  const t0 = performance.now();
  for (let s = 0; s < o.sessions; s++) {
    const sid = sessionId(s);
    await store.sessions.upsert(sid, { title: `Session ${s} ${WORDS[s % WORDS.length]}`, workspace: '/w' }, at);
    for (let k = 0; k < o.runsPerSession; k++) {
      const run = s * o.runsPerSession + k;
      const runId = `r${k}`;
      at += 1000;
      const failed = run % 10 === 3;
      await store.transaction(async (tx) => {
        await tx.runs.insertRun({
          run_id: runId,
          session_id: sid,
          status: failed ? 'failed' : 'completed',
          title: null,
          source: 'coding-agent',
          workspace: '/w',
          started_at: at,
          finished_at: at + 500,
          error: failed ? 'timeout after 60 s' : null,
          change_id: `run:${runId}`,
          tracking: true,
          reason: null,
        });
        const prompt =
          run % 100 === 5 ? 'please run prettier on the whole tree' : `update the ${WORDS[run % WORDS.length]} code`;
        await tx.messages.insert({
          id: `p${k}`,
          session_id: sid,
          role: 'user',
          content: prompt,
          run_id: runId,
          tool_call_id: null,
          created_at: at,
        });
        await tx.runs.insertToolCall({
          tool_call_id: `t${k}`,
          run_id: runId,
          session_id: sid,
          name: run % 100 === 9 ? 'npm run build' : `npx vitest run ${FOLDERS[run % FOLDERS.length]}`,
          status: 'completed',
          started_at: at + 10,
          finished_at: at + 400,
          error: null,
          change_id: `tool:t${k}`,
          tracking: true,
          reason: null,
          workspace: '/w',
        });
        const files = Array.from({ length: o.filesPerRun }, (_, i) => fileOf(run, i, r)).sort((a, b) =>
          a.path < b.path ? -1 : 1,
        );
        await tx.changes.insert(
          {
            change_id: `run:${runId}`,
            session_id: sid,
            run_id: runId,
            tool_call_id: null,
            source: 'coding-agent',
            workspace: '/w',
            workspace_kind: 'git',
            started_at: at,
            finished_at: at + 500,
            changed_count: files.length,
            added_count: 0,
            modified_count: files.length,
            deleted_count: 0,
            renamed_count: 0,
            binary_count: 0,
            truncated: false,
            truncated_reasons: [],
            total_patch_bytes: files.reduce((n, f) => n + f.patch_bytes, 0),
            overlapping: false,
            omitted_count: 0,
            created_at: at + 500,
          },
          files,
          o.runsPerSession + 1,
        );
        await tx.messages.insert({
          id: `a${k}`,
          session_id: sid,
          role: 'assistant',
          content: `Done: ${files.length} files updated.`,
          run_id: runId,
          tool_call_id: null,
          created_at: at + 500,
        });
      });
    }
    if ((s + 1) % 10 === 0) log(`search bench: ${s + 1}/${o.sessions} sessions stored`);
  }
  return (performance.now() - t0) / 1000;
}

/** The queries measured: rare and common words, a phrase, filters, a path, one session. */
const QUERIES: { q: string; session?: string }[] = [
  { q: 'needleword' },
  { q: 'prettier' },
  { q: '"npm run build"' },
  { q: 'retry render3' },
  { q: 'update status:failed' },
  { q: 'path:server/store value12' },
  { q: 'path:components/alpha1' },
  { q: 'agent:codex fetch' },
  { q: 'compute kind:patch' },
  { q: 'const' },
  { q: 'retry', session: 'claude-code:session-42' },
];

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

async function measure(store: Store, rounds: number): Promise<{ queries: QueryFigure[]; p95Ms: number }> {
  const all: number[] = [];
  const queries: QueryFigure[] = [];
  for (const { q, session } of QUERIES) {
    const times: number[] = [];
    let hits = 0;
    let capped = false;
    for (let i = 0; i < rounds; i++) {
      const t = performance.now();
      const answer = await searchHistory(store, DEFAULT_LIMITS, q, session ? { sessionId: session } : {});
      times.push(performance.now() - t);
      hits = answer.hits.length;
      capped = answer.capped;
    }
    all.push(...times);
    queries.push({
      query: session ? `${q} (session ${session})` : q,
      hits,
      capped,
      medianMs: pct(times, 50),
      p95Ms: pct(times, 95),
    });
  }
  return { queries, p95Ms: pct(all, 95) };
}

export async function benchSearch(opts: SearchBenchOptions = {}): Promise<SearchBenchFigures[]> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const o = {
    sessions: opts.sessions ?? 100,
    runsPerSession: opts.runsPerSession ?? 100,
    filesPerRun: opts.filesPerRun ?? 50,
    rounds: opts.rounds ?? 20,
  };
  const out: SearchBenchFigures[] = [];
  const runs = o.sessions * o.runsPerSession;
  const fileRows = runs * o.filesPerRun;
  // RUNDIFF_BENCH_SEARCH_DB keeps the SQLite file (filled once, measured again on later runs).
  const keep = process.env.RUNDIFF_BENCH_SEARCH_DB ?? null;
  if (opts.sqlite !== false) {
    const dir = keep === null ? fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-search-bench-')) : null;
    try {
      const file = keep ?? path.join(dir!, 'rundiff.db');
      const filled = keep !== null && fs.existsSync(file);
      const store = openStore(file);
      try {
        const storeS = filled ? 0 : await fill(store, o, log);
        out.push({ engine: 'sqlite', runs, fileRows, storeS, ...(await measure(store, o.rounds)) });
      } finally {
        await store.close();
      }
    } finally {
      if (dir !== null) fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const given = process.env.RUNDIFF_BENCH_DATABASE_URL ?? null;
  if (opts.postgres || opts.sqlite === false || given !== null) {
    let local: TestPostgres | null = null;
    try {
      if (given === null) local = await startPostgres({ fsync: false });
      const store = await openStoreFrom({ dbPath: '', databaseUrl: given ?? local!.url() });
      try {
        const storeS = given !== null && (await isFilled(store, o.sessions)) ? 0 : await fill(store, o, log);
        out.push({ engine: 'postgres', runs, fileRows, storeS, ...(await measure(store, o.rounds)) });
      } finally {
        await store.close();
      }
    } finally {
      await local?.stop();
    }
  }
  return out;
}

export function formatSearchBench(rows: SearchBenchFigures[]): string {
  const lines: string[] = [];
  for (const r of rows) {
    lines.push(
      `search (${r.engine}): ${r.runs.toLocaleString('en-US')} runs, ${r.fileRows.toLocaleString('en-US')} file rows stored in ${r.storeS.toFixed(1)} s; p95 over all queries ${r.p95Ms.toFixed(1)} ms`,
      '| query | hits | median | p95 |',
      '| --- | --- | --- | --- |',
      ...r.queries.map(
        (q) =>
          `| \`${q.query}\` | ${q.hits}${q.capped ? ' (capped)' : ''} | ${q.medianMs.toFixed(1)} ms | ${q.p95Ms.toFixed(1)} ms |`,
      ),
    );
  }
  return lines.join('\n');
}
