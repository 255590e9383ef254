#!/usr/bin/env node
// `npm start`: build the web UI when dist/web is missing or older than its sources, then run
// `rundiff serve` with the remaining arguments, forwarding signals and the exit code.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Sources whose change makes the built UI stale (folders are walked; node_modules skipped). */
export const BUILD_SOURCES = ['web', 'shared', 'vite.config.ts'];

function newestMtimeMs(p) {
  let stat;
  try {
    stat = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted source file changes its folder's mtime
  for (const entry of fs.readdirSync(p, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    newest = Math.max(newest, newestMtimeMs(path.join(p, entry.name)));
  }
  return newest;
}

/** True when `dist/web/index.html` is missing or older than any file under the build sources. */
export function needsBuild(root = ROOT) {
  let built;
  try {
    built = fs.statSync(path.join(root, 'dist', 'web', 'index.html')).mtimeMs;
  } catch {
    return true;
  }
  return BUILD_SOURCES.some((s) => newestMtimeMs(path.join(root, s)) > built);
}

function runBuild() {
  // Under `npm start`, npm_execpath is npm's own CLI script: run it with this node, no shell.
  const npmCli = process.env.npm_execpath;
  const [cmd, args] =
    npmCli && /\.(c|m)?js$/.test(npmCli)
      ? [process.execPath, [npmCli, 'run', 'build']]
      : [process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build']];
  process.stderr.write('rundiff: building the web UI (npm run build)\n');
  const res = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });
  if (res.error) throw res.error;
  return res.status ?? 1;
}

function serve(args) {
  // Its own process group: a Ctrl-C in the terminal reaches only this script, which forwards it
  // exactly once (a second SIGINT often means "stop now" to a server).
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'rundiff.js'), 'serve', ...args], {
    cwd: process.cwd(),
    stdio: 'inherit',
    detached: process.platform !== 'win32',
  });
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, () => forward(s));
  process.on('exit', () => forward('SIGTERM'));
  child.on('error', (err) => {
    process.stderr.write(`rundiff: could not start the server: ${err.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    const signo = signal ? os.constants.signals[signal] : undefined;
    process.exit(code ?? (signo !== undefined ? 128 + signo : 1));
  });
}

function main() {
  const args = process.argv.slice(2);
  if (needsBuild()) {
    const status = runBuild();
    if (status !== 0) {
      process.stderr.write(`rundiff: the web UI build failed (exit ${status})\n`);
      process.exit(status);
    }
  }
  serve(args);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) main();
