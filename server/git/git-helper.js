// The git helper process: started once by the server (helper-client.ts), it spawns git on request
// and streams each call's output back over its stdout, framed as in frames.js. It exists so that a
// spawn (a fork) costs this small process's memory, not the server's: forking copies the parent's
// page tables, so in the server a spawn blocked the event loop for time proportional to its RSS.
//
// Plain JS that loads nothing of the server but the framing. It never adds environment: each
// request carries git's whole environment, and the helper itself is started with an empty one.
// It exits when its stdin ends (the server closed it or died), killing every git it still runs.
import { spawn } from 'node:child_process';
import {
  EXIT,
  KILL,
  KILLED,
  READY,
  SPAWN,
  SPAWN_ERROR,
  SPAWNED,
  STDERR,
  STDIN,
  STDIN_ACK,
  STDIN_END,
  STDOUT,
  createDecoder,
  encodeFrame,
  encodeJsonFrame,
  encodeU32Frame,
} from './frames.js';

/** Bytes of stderr kept per call (its tail), as the direct runner keeps. */
const STDERR_TAIL_BYTES = 16_384;

/** @type {Map<number, {child: import('node:child_process').ChildProcess, stdoutBytes: number, maxStdoutBytes: number, truncated: boolean, errChunks: Buffer[], errBytes: number, stdinOpen: boolean, exited: boolean}>} */
const calls = new Map();
let paused = false;

/**
 * Output waiting to go to the server, past which git's stdout is no longer read. Writes to a pipe
 * are asynchronous here, so without this bound a server that reads slowly would make this process
 * hold everything git writes. An optional first argument replaces the default of 1 MiB.
 */
const MAX_QUEUED_BYTES = Number(process.argv[2] ?? 1024 * 1024); // tests trip it with a larger one

function send(frame) {
  process.stdout.write(frame);
  if (process.stdout.writableLength > MAX_QUEUED_BYTES && !paused) {
    // git then blocks on its own pipe until the server has read this much.
    paused = true;
    for (const call of calls.values()) call.child.stdout?.pause();
    process.stdout.once('drain', () => {
      paused = false;
      for (const call of calls.values()) call.child.stdout?.resume();
    });
  }
}

/** Sends a data frame without copying the chunk: header and bytes go out as one writev. */
function sendData(type, id, chunk) {
  const header = encodeFrame(type, id, undefined);
  header.writeUInt32BE(chunk.length, 5);
  process.stdout.cork();
  process.stdout.write(header);
  send(chunk);
  process.nextTick(() => process.stdout.uncork());
}

/**
 * Kills git and anything it started: each git leads its own process group. Until its output closes,
 * since something git started may still hold the pipes after git itself exited.
 */
function killGroup(call) {
  if (call.exited) return;
  try {
    process.kill(-call.child.pid, 'SIGKILL');
  } catch {
    try {
      call.child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

function start(id, payload) {
  let req;
  try {
    req = JSON.parse(payload.toString('utf8'));
  } catch (err) {
    send(encodeJsonFrame(SPAWN_ERROR, id, { code: 'EPROTO', message: `bad request: ${err.message}`, sync: true }));
    return;
  }
  let child;
  try {
    child = spawn(req.file, req.args, {
      cwd: req.cwd,
      env: req.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      detached: true,
      windowsHide: true,
    });
  } catch (err) {
    send(encodeJsonFrame(SPAWN_ERROR, id, { code: err.code ?? null, message: err.message, sync: true }));
    return;
  }
  const call = {
    child,
    stdoutBytes: 0,
    maxStdoutBytes: req.maxStdoutBytes,
    truncated: false,
    errChunks: [],
    errBytes: 0,
    stdinOpen: true,
    exited: false,
  };
  calls.set(id, call);
  let settled = false;
  if (child.pid !== undefined) send(encodeU32Frame(SPAWNED, id, child.pid));
  if (paused) child.stdout.pause();
  child.stdout.on('data', (chunk) => {
    if (call.truncated) return;
    if (call.stdoutBytes + chunk.length > call.maxStdoutBytes) {
      const keep = call.maxStdoutBytes - call.stdoutBytes;
      if (keep > 0) sendData(STDOUT, id, chunk.subarray(0, keep));
      call.stdoutBytes = call.maxStdoutBytes;
      call.truncated = true;
      killGroup(call);
      return;
    }
    call.stdoutBytes += chunk.length;
    sendData(STDOUT, id, chunk);
  });
  child.stderr.on('data', (chunk) => {
    call.errChunks.push(chunk);
    call.errBytes += chunk.length;
    while (call.errBytes > STDERR_TAIL_BYTES && call.errChunks.length > 1)
      call.errBytes -= call.errChunks.shift().length;
  });
  child.stdin.on('error', () => {
    // git may exit before reading all of stdin; its exit code tells what happened
    call.stdinOpen = false;
  });
  child.on('error', (err) => {
    if (settled) return;
    settled = true;
    call.exited = true;
    calls.delete(id);
    send(encodeJsonFrame(SPAWN_ERROR, id, { code: err.code ?? null, message: err.message, sync: false }));
  });
  child.on('close', (code, signal) => {
    if (settled) return;
    settled = true;
    call.exited = true;
    calls.delete(id);
    if (call.errBytes > 0) sendData(STDERR, id, Buffer.concat(call.errChunks));
    send(encodeJsonFrame(EXIT, id, { code, signal, stdoutTruncated: call.truncated }));
  });
}

function writeStdin(id, payload) {
  const call = calls.get(id);
  // Acknowledged once git's pipe took the bytes, so the server never has more than its window in
  // flight here; bytes for a call that ended (or whose git closed stdin) are dropped and acknowledged.
  if (!call || !call.stdinOpen) {
    send(encodeU32Frame(STDIN_ACK, id, payload.length));
    return;
  }
  call.child.stdin.write(payload, () => send(encodeU32Frame(STDIN_ACK, id, payload.length)));
}

function onFrame(type, id, payload) {
  switch (type) {
    case SPAWN:
      start(id, payload);
      break;
    case STDIN:
      writeStdin(id, payload);
      break;
    case STDIN_END: {
      const call = calls.get(id);
      if (call?.stdinOpen) call.child.stdin.end();
      break;
    }
    case KILL: {
      const call = calls.get(id);
      if (call) killGroup(call);
      send(encodeFrame(KILLED, id, undefined));
      break;
    }
    default:
      throw new Error(`unknown frame type ${type}`);
  }
}

function shutdown(code) {
  for (const call of calls.values()) killGroup(call);
  process.exit(code);
}

// A terminal's Ctrl-C reaches the whole foreground process group, this process included; the
// server decides when to stop and then closes stdin.
process.on('SIGINT', () => {});
process.stdout.on('error', () => shutdown(0));
const decode = createDecoder(onFrame);
process.stdin.on('data', (chunk) => {
  try {
    decode(chunk);
  } catch (err) {
    process.stderr.write(`rundiff git helper: ${err.message}\n`);
    shutdown(70);
  }
});
process.stdin.on('end', () => shutdown(0));
process.stdin.on('error', () => shutdown(0));
send(encodeFrame(READY, 0, undefined));
