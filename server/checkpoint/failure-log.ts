/** Where the engine's own failures are written (the server's log; stderr by default). */
export type EngineLog = (message: string) => void;

export const stderrLog: EngineLog = (m) => void process.stderr.write(`rundiff: ${m}\n`);

/**
 * A checkpoint or delta (or one walk or read of it) that failed on an exception is answered
 * `degraded`; the exception itself is a bug worth fixing, so its cause is logged with what it was
 * working on. The ids come from the client and the folder from the file system, so they are quoted
 * (no line breaks of their own).
 */
export function logEngineFailure(
  log: EngineLog,
  step: string,
  at: { sessionId: string; changeId: string; root: string },
  err: unknown,
): void {
  const cause = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
  log(
    `${step} failed, answered degraded: session ${JSON.stringify(at.sessionId)} change ${JSON.stringify(at.changeId)} ` +
      `workspace ${JSON.stringify(at.root)}: ${cause}`,
  );
}

/**
 * git could not list a git workspace (a filter driver that cannot be switched off, an index only
 * git can read, git failing or too slow): the walk takes the checkpoint instead, and says so.
 */
export function logOracleFallback(
  log: EngineLog,
  at: { sessionId: string; changeId: string; root: string },
  err: unknown,
  outcome: string,
): void {
  const cause = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  log(
    `git listing unavailable, ${outcome}: session ${JSON.stringify(at.sessionId)} change ${JSON.stringify(at.changeId)} ` +
      `workspace ${JSON.stringify(at.root)}: ${cause}`,
  );
}
