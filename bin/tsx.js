#!/usr/bin/env node
// Runs a TypeScript entry file with tsx's loader (Node 20 cannot run TypeScript by itself).
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

register();
const entry = process.argv[2];
if (!entry) {
  process.stderr.write('usage: node bin/tsx.js FILE.ts [args...]\n');
  process.exit(2);
}
process.argv.splice(1, 1); // the entry becomes argv[1], as if run directly
await import(pathToFileURL(path.resolve(entry)).href);
