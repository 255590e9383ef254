import { spawn, type ChildProcess } from 'node:child_process';
import { stderrTail, type GitLauncher, type GitSpawnEnd, type SpawnedGit } from './launch.ts';

/**
 * Spawns git from this process. Only the fallback for when the git helper process cannot start:
 * a spawn here forks the whole server, which blocks its event loop for time proportional to its
 * resident memory.
 */
export const directLauncher: GitLauncher = {
  launch(req): SpawnedGit {
    let child: ChildProcess;
    try {
      child = spawn(req.file, req.args, {
        cwd: req.cwd,
        env: req.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        // Its own process group, so a kill reaches whatever git started too.
        detached: true,
        windowsHide: true,
      });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      return {
        end: Promise.resolve({ kind: 'spawn-error', code: e.code ?? null, message: e.message, sync: true }),
        kill: () => undefined,
      };
    }
    // Until its output closes: something git started may still hold the pipes after git exited.
    let exited = false;
    const kill = () => {
      if (exited) return;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const end = new Promise<GitSpawnEnd>((resolve) => {
      const out: Buffer[] = [];
      let outBytes = 0;
      let stdoutTruncated = false;
      const err = stderrTail();
      let settled = false;
      child.stdout!.on('data', (chunk: Buffer) => {
        if (stdoutTruncated) return;
        if (outBytes + chunk.length > req.maxStdoutBytes) {
          out.push(chunk.subarray(0, req.maxStdoutBytes - outBytes));
          outBytes = req.maxStdoutBytes;
          stdoutTruncated = true;
          kill();
          return;
        }
        out.push(chunk);
        outBytes += chunk.length;
      });
      child.stderr!.on('data', (chunk: Buffer) => err.push(chunk));
      child.stdin!.on('error', () => {
        /* git may exit before reading all of stdin; the exit code tells what happened */
      });
      child.on('error', (e: NodeJS.ErrnoException) => {
        if (settled) return;
        settled = true;
        exited = true;
        resolve({ kind: 'spawn-error', code: e.code ?? null, message: e.message, sync: false });
      });
      child.on('close', (code, signal) => {
        if (settled) return;
        settled = true;
        exited = true;
        resolve({ kind: 'exit', code, signal, stdout: Buffer.concat(out), stdoutTruncated, stderr: err.text() });
      });
    });
    if (req.input !== undefined) child.stdin!.end(req.input);
    else child.stdin!.end();
    return { end, kill };
  },
};
