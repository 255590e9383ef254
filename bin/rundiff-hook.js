#!/usr/bin/env node
// The hook client for agents whose hooks run a command: reads the hook's JSON on stdin, POSTs it to
// <server>/api/hooks/<agent>, waits for the answer (the server answers once the checkpoint exists),
// and always exits 0. Plain JavaScript on Node's built-ins only: it starts on every tool call, so
// it must not pay for a TypeScript loader. When no server answers, it starts one in the background
// (loopback only, unless --no-autostart) and posts again once.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openLog, openStateDir, releaseStartLock, takeStartLock, writePidFile } from './hook-state.js';

/** Agents that read the hook's stdout as JSON and need an answer there; the others get nothing. */
const JSON_REPLY_AGENTS = new Set(['gemini']);
/** The longest wait for the server's answer (a checkpoint of a large workspace included). */
const ANSWER_TIMEOUT_MS = 30_000;
/** The longest wait for a server started here to answer its health check. */
const START_TIMEOUT_MS = 20_000;
const MAX_STDIN_BYTES = 64 * 1024 * 1024;

function parse(argv) {
  const out = { agent: null, server: null, autostart: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--no-autostart') out.autostart = false;
    else if (a === '--server') out.server = argv[++i] ?? null;
    else if (a.startsWith('--server=')) out.server = a.slice('--server='.length);
    else if (!a.startsWith('--') && out.agent === null) out.agent = a;
  }
  return out;
}

function defaultServer(env) {
  const host = env.RUNDIFF_HOST || '127.0.0.1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${env.RUNDIFF_PORT || 7420}`;
}

/** The data folder the server's default database lives in (its log and pid file go there too). */
function dataDir(env) {
  const home = env.HOME && path.isAbsolute(env.HOME) ? env.HOME : os.homedir();
  const base =
    env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(home, '.local', 'share');
  return path.join(base, 'rundiff');
}

function readStdin() {
  return new Promise((resolve) => {
    if (process.stdin.isTTY) return resolve(Buffer.alloc(0));
    const chunks = [];
    let size = 0;
    process.stdin.on('data', (c) => {
      size += c.length;
      if (size <= MAX_STDIN_BYTES) chunks.push(c);
    });
    process.stdin.on('end', () => resolve(Buffer.concat(chunks)));
    process.stdin.on('error', () => resolve(Buffer.concat(chunks)));
  });
}

/** One request; resolves {status, body} or {error} (never rejects). */
function request(url, method, body, timeoutMs) {
  return new Promise((resolve) => {
    const headers = { accept: 'application/json' };
    if (process.env.RUNDIFF_TOKEN) headers.authorization = `Bearer ${process.env.RUNDIFF_TOKEN}`;
    if (body !== null) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(body.length);
    }
    let req;
    try {
      req = http.request(url, { method, headers, timeout: timeoutMs }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (error) => resolve({ error }));
      });
    } catch (error) {
      return resolve({ error });
    }
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error) => resolve({ error }));
    if (body !== null) req.write(body);
    req.end();
  });
}

const refused = (r) => r.error && ['ECONNREFUSED', 'ECONNRESET', 'EADDRNOTAVAIL'].includes(r.error.code);
const isLoopback = (host) => ['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host) || host.startsWith('127.');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * What the server a hook starts inherits from the agent's environment: only what Node and git need
 * to run as the user (the variables the server's git runner passes through, plus locale, time zone
 * and the user's name). The agent's environment may be set by the repository it works in (an
 * agent's project settings can set variables), so no RUNDIFF_* setting (upstream, token, allowed
 * hosts, database, ...) and nothing that changes how Node runs (NODE_OPTIONS, NODE_PATH, loader and
 * preload variables) reaches it: the server takes its settings from its command line, which holds
 * only what the installer wrote (the server URL's host and port) and the default database.
 */
const SERVER_ENV = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'XDG_CONFIG_HOME',
  'TMPDIR',
  'TZ',
  'LANG',
  'LANGUAGE',
  'SYSTEMROOT',
];
const SERVER_ENV_PREFIXES = ['LC_'];

function serverEnv(env) {
  const out = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (SERVER_ENV.includes(name) || SERVER_ENV_PREFIXES.some((p) => name.startsWith(p))) out[name] = value;
  }
  return out;
}

/**
 * Starts `rundiff serve` detached on the URL's loopback port with the default database, its output
 * appended to a log in the data folder and its pid written beside it. A lock file keeps hooks that
 * fire together from starting one server each; a hook that finds a fresh lock only waits for the
 * health check. Resolves the opened state folder (a server was started: its lock is released, and
 * the folder closed, once the server answers or the wait is over), 'waiting' (another hook is
 * starting one) or an Error saying why nothing was started (the state folder or one of its files
 * could not be used safely).
 */
function startServer(server, env) {
  const state = openStateDir(dataDir(env));
  if (state instanceof Error) return state;
  try {
    if (!takeStartLock(state)) {
      state.close();
      return 'waiting';
    }
  } catch (err) {
    state.close();
    throw err;
  }
  try {
    spawnServer(server, env, state);
  } catch (err) {
    // Nothing started: the next hook must not wait for this one's server.
    releaseStartLock(state);
    state.close();
    throw err;
  }
  return state;
}

function spawnServer(server, env, state) {
  const url = new URL(server);
  const port = url.port || '80';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const db = path.join(state.dir, 'rundiff.db');
  const args = ['serve', '--host', host, '--port', port, '--db', db];
  const log = openLog(state);
  const cli = path.join(path.dirname(fileURLToPath(import.meta.url)), 'rundiff.js');
  try {
    const stamp = `[${new Date().toISOString()}]`;
    if (log.replaced !== null)
      fs.writeSync(log.fd, `\n${stamp} server.log was ${log.replaced}: replaced (its target is untouched)\n`);
    fs.writeSync(
      log.fd,
      `\n${stamp} started by a hook: rundiff ${args.join(' ')} (loopback, no token; the agent's RUNDIFF_* settings do not apply to it)\n`,
    );
    const child = spawn(process.execPath, [cli, ...args], {
      detached: true,
      stdio: ['ignore', log.fd, log.fd],
      env: serverEnv(env),
      cwd: state.dir,
    });
    child.on('error', () => {});
    child.unref();
    if (child.pid !== undefined) {
      try {
        writePidFile(state, child.pid);
      } catch (err) {
        // The server runs all the same; only its pid file is missing.
        fs.writeSync(log.fd, `${stamp} server.pid not written: ${err instanceof Error ? err.message : String(err)}\n`);
      }
    }
  } finally {
    fs.closeSync(log.fd);
  }
}

async function waitForHealth(server, deadline) {
  while (Date.now() < deadline) {
    const r = await request(new URL('/api/health', server), 'GET', null, 1_000);
    if (!r.error && r.status === 200) return true;
    await sleep(100);
  }
  return false;
}

function note(message) {
  // stderr only: the agent reads stdout, and most agents show stderr only in a debug view.
  process.stderr.write(`rundiff-hook: ${message}\n`);
}

async function main() {
  const args = parse(process.argv.slice(2));
  if (!args.agent) return note('usage: rundiff-hook.js <agent> [--server URL] [--no-autostart]');
  const server = args.server || defaultServer(process.env);
  const payload = await readStdin();
  let target;
  try {
    target = new URL(`/api/hooks/${encodeURIComponent(args.agent)}`, server);
  } catch {
    return note(`not a server URL: ${server}`);
  }
  let answer = await request(target, 'POST', payload, ANSWER_TIMEOUT_MS);
  if (refused(answer) && args.autostart && isLoopback(target.hostname)) {
    let started;
    try {
      started = startServer(server, process.env);
    } catch (err) {
      started = err instanceof Error ? err : new Error(String(err));
    }
    if (started instanceof Error) note(`did not start a server for ${server}: ${started.message}`);
    else {
      const healthy = await waitForHealth(server, Date.now() + START_TIMEOUT_MS);
      if (started !== 'waiting') {
        releaseStartLock(started);
        started.close();
      }
      if (healthy) answer = await request(target, 'POST', payload, ANSWER_TIMEOUT_MS);
      else note(`started a server for ${server}, but it did not answer; its log is in ${dataDir(process.env)}`);
    }
  }
  if (answer.error) note(`${server}: ${answer.error.message}`);
  else if (answer.status !== 200) note(`${server} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  else if (carriesSomething(answer.body)) reply = answer.body;
}

/**
 * A server answer worth passing on: a JSON object with at least one field (a review for the agent,
 * in its own answer shape). It is printed exactly as received; `{}` and anything else are not.
 */
function carriesSomething(body) {
  try {
    const parsed = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length > 0;
  } catch {
    return false;
  }
}

/** The server's answer to print on stdout, when it carries something for the agent. */
let reply = null;

// Whatever happened, the agent carries on: exit 0, and on stdout only the server's answer when it
// carries something (exactly as the server sent it), else the neutral answer an agent that expects
// one reads.
const agent = parse(process.argv.slice(2)).agent;
main()
  .catch((err) => note(err instanceof Error ? err.message : String(err)))
  .finally(() => {
    if (reply !== null) process.stdout.write(`${reply}\n`);
    else if (JSON_REPLY_AGENTS.has(agent)) process.stdout.write('{}\n');
    process.exitCode = 0;
  });
