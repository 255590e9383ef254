#!/usr/bin/env node
// The `rundiff` command: loads the TypeScript CLI through tsx's loader.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../server/cli/index.ts');
await main(process.argv.slice(2));
