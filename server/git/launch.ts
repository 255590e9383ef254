/**
 * How the runner has git started: directly from this process (`direct-spawn.ts`) or by the
 * long-lived helper process (`helper-client.ts`). Both answer with the same `GitSpawnEnd`, so the
 * runner turns every outcome into one `GitResult` or `AppError` whichever started git.
 */

export interface GitSpawnRequest {
  /** The git executable (a name looked up on the environment's PATH, or a path). */
  file: string;
  /** The whole argument vector after the executable. */
  args: readonly string[];
  cwd: string;
  /** git's complete environment: nothing is added to it or inherited. */
  env: Readonly<Record<string, string>>;
  /** Bytes written to stdin, then stdin is closed; without it stdin is closed at once. */
  input: Buffer | undefined;
  /** stdout past this many bytes is dropped and git is killed (`stdoutTruncated`). */
  maxStdoutBytes: number;
}

export type GitSpawnEnd =
  /** git ran and closed its output; `code` null with a `signal` when it was killed. */
  | {
      kind: 'exit';
      code: number | null;
      signal: string | null;
      stdout: Buffer;
      stdoutTruncated: boolean;
      stderr: string;
    }
  /** git could not be started (`code` is the errno name); `sync` when spawn threw instead of reporting. */
  | { kind: 'spawn-error'; code: string | null; message: string; sync: boolean }
  /** The process that ran git went away before git's answer arrived. */
  | { kind: 'lost'; reason: string };

export interface SpawnedGit {
  readonly end: Promise<GitSpawnEnd>;
  /** Kills git and what it started; `end` then settles as a killed git (or `lost`). */
  kill(): void;
}

export interface GitLauncher {
  launch(req: GitSpawnRequest): SpawnedGit;
}

/** Bytes of stderr kept per call: its tail (the git helper keeps the same bound). */
export const STDERR_TAIL_BYTES = 16_384;

/** Keeps the last `STDERR_TAIL_BYTES` of a stream (whole chunks, at least the last one). */
export function stderrTail(): { push(chunk: Buffer): void; text(): string } {
  const chunks: Buffer[] = [];
  let bytes = 0;
  return {
    push(chunk) {
      chunks.push(chunk);
      bytes += chunk.length;
      while (bytes > STDERR_TAIL_BYTES && chunks.length > 1) bytes -= chunks.shift()!.length;
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
}
