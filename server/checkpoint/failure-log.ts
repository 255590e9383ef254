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
 * A strategy could not take a workspace (git-status: a filter driver that cannot be switched off,
 * an index only git can read, git failing or too slow): `what` it lacked, and the `outcome` (the
 * next strategy takes the checkpoint, or it says why it claims nothing).
 */
export function logStrategyFallback(
  log: EngineLog,
  at: { sessionId: string; changeId: string; root: string },
  what: string,
  err: unknown,
  outcome: string,
): void {
  const cause = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  log(
    `${what} unavailable, ${outcome}: session ${JSON.stringify(at.sessionId)} change ${JSON.stringify(at.changeId)} ` +
      `workspace ${JSON.stringify(at.root)}: ${cause}`,
  );
}
