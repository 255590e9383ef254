import { benchEngine, formatEngineBench } from './engine.ts';

/**
 * `npm run bench [engine] [monorepo] [monorepo500k] [toolcall] [toolcallplain] [toolcall500k] [diff] [bridge] [detail] [loop] [hooks] [live] [contents] [reviews] [engines] [edge] [spawn] [search] [start]`:
 * runs the named benchmarks (all by default but monorepo500k, toolcall500k and search) and prints their
 * figures. Each benchmark is its own module exporting one async function.
 * `detail` takes options after the names: `--rate=N` (requests/s), `--windows=N`, `--duration=S`,
 * `--runs=off`, `--profile=FILE` (the server's CPU profile of the first window).
 */
const wanted = new Set(process.argv.slice(2).filter((a) => !a.startsWith('--')));
const all = wanted.size === 0;

if (all || wanted.has('engine')) {
  const r = await benchEngine();
  process.stdout.write(`${formatEngineBench(r)}\n`);
}
if (all || wanted.has('monorepo')) {
  const { benchMonorepo, formatMonorepoBench } = await import('./monorepo.ts');
  const r = await benchMonorepo({ files: 100_000 });
  process.stdout.write(`${formatMonorepoBench(r)}\n`);
}
// Opt-in: generating and listing 500,000 files takes minutes.
if (wanted.has('monorepo500k')) {
  const { benchMonorepo, formatMonorepoBench } = await import('./monorepo.ts');
  const r = await benchMonorepo({ files: 500_000, rounds: 3 });
  process.stdout.write(`${formatMonorepoBench(r)}\n`);
}
// The cost of one tool call with the checkpoint watcher off and on, against git status.
if (all || wanted.has('toolcall')) {
  const { benchToolCall, formatToolCallBench } = await import('./toolcall.ts');
  for (const files of [2_000, 100_000])
    process.stdout.write(`${formatToolCallBench(await benchToolCall({ files }))}\n`);
}
// The same in a plain folder (no git), the calls inside a run (`toolcall` runs it too).
if (all || wanted.has('toolcall') || wanted.has('toolcallplain')) {
  const { benchPlainToolCall, formatPlainToolCallBench } = await import('./toolcall.ts');
  for (const files of [2_000, 20_000])
    process.stdout.write(`${formatPlainToolCallBench(await benchPlainToolCall({ files }))}\n`);
}
// Opt-in, like monorepo500k.
if (wanted.has('toolcall500k')) {
  const { benchToolCall, formatToolCallBench } = await import('./toolcall.ts');
  process.stdout.write(`${formatToolCallBench(await benchToolCall({ files: 500_000, calls: 7 }))}\n`);
}
if (all || wanted.has('diff')) {
  const { benchBigDiff, formatBigDiffBench } = await import('./big-diff.ts');
  const r = await benchBigDiff();
  process.stdout.write(`${formatBigDiffBench(r)}\n`);
}
if (all || wanted.has('bridge')) {
  const { benchBridge, bridgeReport } = await import('./bridge.ts');
  const r = await benchBridge();
  process.stdout.write(`${bridgeReport(r)}\n`);
}
if (all || wanted.has('detail')) {
  const { benchDetailLoad, detailLoadArgs, formatDetailLoad } = await import('./detail-load.ts');
  const r = await benchDetailLoad(detailLoadArgs(process.argv.slice(2)));
  process.stdout.write(`${formatDetailLoad(r)}\n`);
}
if (all || wanted.has('loop')) {
  const { benchEventLoop, formatEventLoopBench } = await import('./event-loop.ts');
  const r = await benchEventLoop();
  process.stdout.write(`${formatEventLoopBench(r)}\n`);
}
if (all || wanted.has('hooks')) {
  const { benchHookTransports, formatHookTransports } = await import('./hook-transports.ts');
  process.stdout.write(`${formatHookTransports(await benchHookTransports())}\n`);
  const { benchHooks, formatHooksBench } = await import('./hooks.ts');
  const r = await benchHooks();
  process.stdout.write(`${formatHooksBench(r)}\n`);
}
if (all || wanted.has('live')) {
  const { benchLiveFeed, formatLiveFeedBench } = await import('./live-feed.ts');
  const r = await benchLiveFeed();
  process.stdout.write(`${formatLiveFeedBench(r)}\n`);
}
if (all || wanted.has('contents')) {
  const { benchContents, formatContentsBench } = await import('./contents.ts');
  const r = await benchContents();
  process.stdout.write(`${formatContentsBench(r)}\n`);
}
if (all || wanted.has('reviews')) {
  const { benchReviews, formatReviewsBench } = await import('./reviews.ts');
  const r = await benchReviews();
  process.stdout.write(`${formatReviewsBench(r)}\n`);
}
if (all || wanted.has('engines')) {
  const { benchStoreEngines, storeEnginesReport } = await import('./store-engines.ts');
  const r = await benchStoreEngines();
  process.stdout.write(`${storeEnginesReport(r)}\n`);
}
if (all || wanted.has('edge')) {
  const { benchEdge, formatEdgeBench } = await import('./edge.ts');
  const r = await benchEdge();
  process.stdout.write(`${formatEdgeBench(r)}\n`);
}
if (all || wanted.has('spawn')) {
  const { benchSpawn, formatSpawnBench } = await import('./spawn.ts');
  const r = await benchSpawn();
  process.stdout.write(`${formatSpawnBench(r)}\n`);
}
if (all || wanted.has('start')) {
  const { benchCliStart, formatCliStartBench } = await import('./cli-start.ts');
  const r = await benchCliStart();
  process.stdout.write(`${formatCliStartBench(r)}\n`);
}
// Opt-in: storing 500,000 file rows takes minutes (`--postgres` measures PostgreSQL too).
if (wanted.has('search')) {
  const { benchSearch, formatSearchBench } = await import('./search.ts');
  const small = process.argv.includes('--small');
  const only = process.argv.includes('--postgres-only');
  const r = await benchSearch({
    postgres: only || process.argv.includes('--postgres'),
    sqlite: !only,
    ...(small ? { sessions: 10 } : {}),
  });
  process.stdout.write(`${formatSearchBench(r)}\n`);
}
// A benchmark that used the throwaway PostgreSQL server leaves it running (a child process), which
// would keep this process alive.
const { stopSharedPostgres } = await import('../server/test-support/postgres.ts');
await stopSharedPostgres();
