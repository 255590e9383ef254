import { benchEngine, formatEngineBench } from './engine.ts';

/**
 * `npm run bench [engine] [diff] [bridge] [loop] [hooks] [spawn]`: runs the named benchmarks (all by default) and prints their
 * figures. Each benchmark is its own module exporting one async function.
 */
const wanted = new Set(process.argv.slice(2));
const all = wanted.size === 0;

if (all || wanted.has('engine')) {
  const r = await benchEngine();
  process.stdout.write(`${formatEngineBench(r)}\n`);
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
if (all || wanted.has('loop')) {
  const { benchEventLoop, formatEventLoopBench } = await import('./event-loop.ts');
  const r = await benchEventLoop();
  process.stdout.write(`${formatEventLoopBench(r)}\n`);
}
if (all || wanted.has('hooks')) {
  const { benchHooks, formatHooksBench } = await import('./hooks.ts');
  const r = await benchHooks();
  process.stdout.write(`${formatHooksBench(r)}\n`);
}
if (all || wanted.has('spawn')) {
  const { benchSpawn, formatSpawnBench } = await import('./spawn.ts');
  const r = await benchSpawn();
  process.stdout.write(`${formatSpawnBench(r)}\n`);
}
