#!/usr/bin/env node
// The `rundiff` command. In a checkout it runs the TypeScript sources through tsx's loader; an
// installed package has no sources, only the compiled JavaScript in dist/ (`npm pack` builds it),
// which starts without a loader.
import fs from 'node:fs';

const sources = new URL('../server/cli/index.ts', import.meta.url);
let main;
if (fs.existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import(sources.href));
} else {
  ({ main } = await import('../dist/server/cli/index.js'));
}
await main(process.argv.slice(2));
