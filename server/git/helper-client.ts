import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { directLauncher } from './direct-spawn.ts';
import * as F from './frames.js';
import type { GitLauncher, GitSpawnEnd, GitSpawnRequest, SpawnedGit } from './launch.ts';

/**
 * The server's side of the git helper process (`git-helper.js`): one long-lived child, started on
 * the first git call, that spawns every git for the server. A spawn forks the process that makes it,
 * and a fork costs time proportional to that process's memory; the helper is a few MiB, the server
 * up to hundreds. Calls are multiplexed over the helper's stdin/stdout in the frames of `frames.js`.
 */

export interface GitSpawnerOptions {
  /** Executable and arguments that start the helper. Default: this Node, a small heap, `git-helper.js`. */
  command?: { file: string; args: readonly string[] };
  /** Told (once) when the helper cannot start and git is spawned from this process instead. Default: stderr. */
  log?: (message: string) => void;
  /** How long the helper may take to say it is ready (ms). Default 10,000. */
  startTimeoutMs?: number;
  /** How long the helper may take to confirm a kill before it is taken for stuck and replaced (ms). Default 1,000. */
  killAckMs?: number;
  /** stdin bytes of one call sent to the helper but not yet handed to git. Default 1 MiB. */
  stdinWindowBytes?: number;
}

export interface GitSpawnerInfo {
  /** `direct` once the helper could not start (git is then spawned from this process). */
  mode: 'helper' | 'direct';
  /** The running helper's process id. */
  pid: number | null;
  /** Calls waiting for git's answer. */
  pending: number;
  /** stdin bytes sent to the helper and not yet handed to git, over all calls (each at most its window). */
  stdinInFlightBytes: number;
  /** Process ids of the gits the helper reported started and not yet ended. */
  gitPids: number[];
}

export interface GitSpawner extends GitLauncher {
  /**
   * Stops the helper: waits up to `waitMs` (default 1,000) for running calls, closes its stdin (it
   * kills what still runs and exits), and kills it if it has not exited after `exitMs` (default
   * 1,000). A later call starts a new helper.
   */
  close(opts?: { waitMs?: number; exitMs?: number }): Promise<void>;
  info(): GitSpawnerInfo;
}

/** The helper's own heap stays small: it holds frames in flight, never whole outputs. */
export function defaultHelperCommand(): { file: string; args: string[] } {
  return {
    file: process.execPath,
    args: [
      '--max-old-space-size=16',
      '--max-semi-space-size=1',
      fileURLToPath(new URL('./git-helper.js', import.meta.url)),
    ],
  };
}

/** Bytes of stdin per frame. */
const STDIN_CHUNK_BYTES = 256 * 1024;

interface Call {
  id: number;
  helper: Helper;
  req: GitSpawnRequest;
  settle: (end: GitSpawnEnd) => void;
  gitPid: number | null;
  out: Buffer[];
  outBytes: number;
  truncated: boolean;
  stderr: string;
  sent: number;
  unacked: number;
  endSent: boolean;
  killTimer: NodeJS.Timeout | null;
  /** Set when the helper could not start and this call went to a direct spawn. */
  direct: SpawnedGit | null;
}

interface Helper {
  child: ChildProcess;
  ready: boolean;
  gone: boolean;
  /** Calls sent to the helper, by id. */
  calls: Map<number, Call>;
  /** Calls made before the helper said it was ready. */
  waiting: Call[];
  closed: Promise<void>;
  idle: (() => void) | null;
}

const killedBeforeStart = (): GitSpawnEnd => ({
  kind: 'exit',
  code: null,
  signal: 'SIGKILL',
  stdout: Buffer.alloc(0),
  stdoutTruncated: false,
  stderr: '',
});

export function createGitSpawner(opts: GitSpawnerOptions = {}): GitSpawner {
  const command = opts.command ?? defaultHelperCommand();
  const log = opts.log ?? ((m: string) => void process.stderr.write(`rundiff: ${m}\n`));
  const startTimeoutMs = opts.startTimeoutMs ?? 10_000;
  const killAckMs = opts.killAckMs ?? 1_000;
  const window = opts.stdinWindowBytes ?? 1024 * 1024;
  let helper: Helper | null = null;
  let direct = false;
  let nextId = 1;

  const pending = (h: Helper) => h.calls.size + h.waiting.length;

  /** The helper keeps this process alive only while a call waits on it. */
  function holdOpen(h: Helper, hold: boolean) {
    if (h.gone) return;
    for (const handle of [h.child, h.child.stdout as Socket | null, h.child.stdin as Socket | null]) {
      if (hold) handle?.ref();
      else handle?.unref();
    }
  }

  function finish(h: Helper, call: Call, end: GitSpawnEnd) {
    if (call.killTimer) clearTimeout(call.killTimer);
    h.calls.delete(call.id);
    call.settle(end);
    if (pending(h) === 0) {
      holdOpen(h, false);
      h.idle?.();
    }
  }

  function write(h: Helper, frame: Buffer) {
    if (!h.gone) h.child.stdin!.write(frame);
  }

  /** Sends stdin up to the call's window; the rest follows as the helper acknowledges. */
  function pump(h: Helper, call: Call) {
    const input = call.req.input;
    if (input) {
      const stdin = h.child.stdin!;
      while (call.sent < input.length && call.unacked < window) {
        const n = Math.min(STDIN_CHUNK_BYTES, input.length - call.sent, window - call.unacked);
        const header = F.encodeFrame(F.STDIN, call.id, undefined);
        header.writeUInt32BE(n, 5);
        // Header and bytes as one writev, without copying the caller's buffer.
        stdin.cork();
        stdin.write(header);
        stdin.write(input.subarray(call.sent, call.sent + n));
        stdin.uncork();
        call.sent += n;
        call.unacked += n;
      }
      if (call.sent < input.length) return;
    }
    if (!call.endSent) {
      call.endSent = true;
      write(h, F.encodeFrame(F.STDIN_END, call.id, undefined));
    }
  }

  function send(h: Helper, call: Call) {
    h.calls.set(call.id, call);
    const { file, args, cwd, env, maxStdoutBytes } = call.req;
    write(h, F.encodeJsonFrame(F.SPAWN, call.id, { file, args, cwd, env, maxStdoutBytes }));
    pump(h, call);
  }

  function onFrame(h: Helper, type: number, id: number, payload: Buffer) {
    if (type === F.READY) {
      h.ready = true;
      for (const call of h.waiting.splice(0)) send(h, call);
      return;
    }
    const call = h.calls.get(id);
    if (!call) return; // a call answered already (timed out and abandoned, or killed)
    switch (type) {
      case F.SPAWNED:
        call.gitPid = payload.readUInt32BE(0);
        break;
      case F.STDOUT: {
        // The helper enforces the cap; this bound only guards against a misbehaving helper.
        const room = call.req.maxStdoutBytes - call.outBytes;
        if (payload.length > room) call.truncated = true;
        const kept = payload.length > room ? payload.subarray(0, room) : payload;
        if (kept.length > 0) call.out.push(kept);
        call.outBytes += kept.length;
        break;
      }
      case F.STDIN_ACK:
        call.unacked -= payload.readUInt32BE(0);
        pump(h, call);
        break;
      case F.STDERR:
        call.stderr = payload.toString('utf8');
        break;
      case F.KILLED:
        if (call.killTimer) clearTimeout(call.killTimer);
        call.killTimer = null;
        break;
      case F.EXIT: {
        const e = JSON.parse(payload.toString('utf8')) as {
          code: number | null;
          signal: string | null;
          stdoutTruncated: boolean;
        };
        finish(h, call, {
          kind: 'exit',
          code: e.code,
          signal: e.signal,
          stdout: Buffer.concat(call.out, call.outBytes),
          stdoutTruncated: e.stdoutTruncated || call.truncated,
          stderr: call.stderr,
        });
        break;
      }
      case F.SPAWN_ERROR: {
        const e = JSON.parse(payload.toString('utf8')) as { code: string | null; message: string; sync: boolean };
        finish(h, call, { kind: 'spawn-error', code: e.code, message: e.message, sync: e.sync });
        break;
      }
      default:
        terminate(h, `the git helper sent an unknown frame type ${type}`);
    }
  }

  /** Ends a helper that misbehaves or does not answer; its calls then fail as `lost`. */
  function terminate(h: Helper, why: string) {
    if (h.gone) return;
    log(`${why}; stopping it (pid ${h.child.pid ?? '?'})`);
    h.child.kill('SIGKILL');
  }

  function onGone(h: Helper, why: string) {
    if (h.gone) return;
    h.gone = true;
    if (helper === h) helper = null;
    if (!h.ready) {
      // It never took a request, so nothing ran: the waiting calls go to a direct spawn.
      direct = true;
      log(`the git helper process could not start (${why}); git is spawned from the server process instead`);
      for (const call of h.waiting.splice(0)) {
        call.direct = directLauncher.launch(call.req);
        void call.direct.end.then(call.settle);
      }
      h.idle?.();
      return;
    }
    for (const call of [...h.calls.values()]) {
      // git leads its own process group; with the helper gone nobody else would stop it.
      if (call.gitPid !== null) {
        try {
          process.kill(-call.gitPid, 'SIGKILL');
        } catch {
          // it had exited
        }
      }
      finish(h, call, { kind: 'lost', reason: `the git helper process exited (${why})` });
    }
  }

  function start(): Helper {
    let child: ChildProcess;
    const h = { ready: false, gone: true, calls: new Map(), waiting: [], idle: null } as unknown as Helper;
    try {
      child = spawn(command.file, [...command.args], {
        // An empty environment: git's comes whole with each request, and nothing the server
        // inherited (NODE_OPTIONS, GIT_*) reaches the helper.
        env: {},
        stdio: ['pipe', 'pipe', 'inherit'],
        shell: false,
        windowsHide: true,
      });
    } catch (err) {
      h.closed = Promise.resolve();
      // Reported once the caller's call is queued (the helper counts as not gone until then).
      h.gone = false;
      queueMicrotask(() => onGone(h, (err as Error).message));
      return h;
    }
    h.child = child;
    h.gone = false;
    let startTimer: NodeJS.Timeout | undefined = setTimeout(() => {
      if (!h.ready) {
        log(`the git helper process did not start within ${startTimeoutMs} ms`);
        child.kill('SIGKILL');
      }
    }, startTimeoutMs);
    startTimer.unref();
    const decode = F.createDecoder((type, id, payload) => {
      if (type === F.READY && startTimer) {
        clearTimeout(startTimer);
        startTimer = undefined;
      }
      onFrame(h, type, id, payload);
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      try {
        decode(chunk);
      } catch (err) {
        terminate(h, `the git helper sent a malformed frame (${(err as Error).message})`);
      }
    });
    child.stdin!.on('error', () => {
      /* the helper died; its close tells the calls */
    });
    h.closed = new Promise<void>((resolve) => {
      let spawnError: string | null = null;
      child.on('error', (err) => {
        spawnError = err.message;
        // A failed spawn may never emit close.
        if (child.pid === undefined) {
          onGone(h, err.message);
          resolve();
        }
      });
      child.on('close', (code, signal) => {
        clearTimeout(startTimer);
        onGone(h, spawnError ?? (signal ? `signal ${signal}` : `exit code ${code}`));
        resolve();
      });
    });
    return h;
  }

  function kill(call: Call) {
    if (call.direct) return call.direct.kill();
    const h = call.helper;
    if (h.gone || (h.calls.get(call.id) !== call && !h.waiting.includes(call))) return;
    const at = h.waiting.indexOf(call);
    if (at >= 0) {
      h.waiting.splice(at, 1);
      finish(h, call, killedBeforeStart());
      return;
    }
    write(h, F.encodeFrame(F.KILL, call.id, undefined));
    call.killTimer ??= setTimeout(
      () => terminate(h, `the git helper did not confirm a kill within ${killAckMs} ms`),
      killAckMs,
    );
  }

  return {
    launch(req): SpawnedGit {
      if (direct) return directLauncher.launch(req);
      const h = (helper ??= start());
      let settle!: (end: GitSpawnEnd) => void;
      const end = new Promise<GitSpawnEnd>((resolve) => (settle = resolve));
      const call: Call = {
        id: nextId++,
        helper: h,
        req,
        settle,
        gitPid: null,
        out: [],
        outBytes: 0,
        truncated: false,
        stderr: '',
        sent: 0,
        unacked: 0,
        endSent: false,
        killTimer: null,
        direct: null,
      };
      if (nextId > 0xffff_ffff) nextId = 1;
      if (h.child) holdOpen(h, true);
      if (h.ready) send(h, call);
      else h.waiting.push(call);
      return { end, kill: () => kill(call) };
    },

    async close({ waitMs = 1_000, exitMs = 1_000 } = {}) {
      const h = helper;
      helper = null;
      if (!h || h.gone) return;
      const wait = (ms: number, p: Promise<void>) => {
        let timer: NodeJS.Timeout | undefined;
        return Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, ms)))]).finally(() =>
          clearTimeout(timer),
        );
      };
      if (pending(h) > 0) await wait(waitMs, new Promise<void>((r) => (h.idle = r)));
      h.child.stdin!.end();
      await wait(exitMs, h.closed);
      if (!h.gone) {
        h.child.kill('SIGKILL');
        await h.closed;
      }
    },

    info: () => ({
      mode: direct ? 'direct' : 'helper',
      pid: helper && !helper.gone ? (helper.child.pid ?? null) : null,
      pending: helper ? pending(helper) : 0,
      stdinInFlightBytes: helper ? [...helper.calls.values()].reduce((n, c) => n + c.unacked, 0) : 0,
      gitPids: helper ? [...helper.calls.values()].flatMap((c) => (c.gitPid === null ? [] : [c.gitPid])) : [],
    }),
  };
}
