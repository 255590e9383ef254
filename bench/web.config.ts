import { singleServerConfig } from '../e2e/test-servers.ts';

// `npm run bench:web`: the built UI (the patch viewer, and the whole file list of a large change) on a real server with a fresh database, in Chromium.
// Not part of `npm test`.
export default singleServerConfig({
  envPrefix: 'RUNDIFF_BENCH_WEB',
  testDir: '.',
  testMatch: 'web*.bench.ts',
  globalTeardown: './web-teardown.ts',
  outputDir: '../test-results/bench-web',
  timeout: 300_000,
  viewport: { width: 1280, height: 800 },
}).config;
