import { singleServerConfig } from './test-servers.ts';

// `npm run screenshots`: one real server with a fresh database; the spec plays the demo through it
// and writes docs/screenshots/*.png. Not part of `npm test`.
export default singleServerConfig({
  envPrefix: 'RUNDIFF_SHOTS',
  testDir: 'screenshots',
  testMatch: '**/*.shot.ts',
  globalTeardown: './screenshots/teardown.ts',
  outputDir: '../test-results/screenshots',
  timeout: 120_000,
  expectTimeout: 30_000,
}).config;
