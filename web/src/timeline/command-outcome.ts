import { DURATION_PATTERN, formatDuration, type Message, type Run } from '../../../shared/index.ts';

/**
 * The outcome line `rundiff run` reports for its command: `exit 1 in 12 ms`, `exit 1 in 0.5 s`,
 * `killed by SIGTERM after 1.0 s`.
 */
const COMMAND_OUTCOME = new RegExp(
  `^(exit -?\\d+ in ${DURATION_PATTERN}|killed by SIG[A-Z0-9]+ after ${DURATION_PATTERN})$`,
);
/** An error that already says how long the run took. */
const CARRIES_DURATION = new RegExp(`\\b(in|after) ${DURATION_PATTERN}$`);

/**
 * A message that only repeats what its run's marker shows: the outcome line a wrapped command's run
 * reports as its reply. The marker says it once, with one label and one duration.
 */
export function isCommandOutcome(message: Message, run: Run | undefined): boolean {
  if (message.role !== 'assistant' || !run || run.source !== 'run' || run.status === 'running') return false;
  return COMMAND_OUTCOME.test(message.content) || (run.error !== null && message.content === run.error);
}

/** The run marker's words: `Run completed in 4.2 s`, `Run failed` when its error carries the duration. */
export function runMarkerLabel(run: Run): string {
  if (run.status === 'running') return 'Run started, running…';
  const took = run.finished_at !== null ? ` in ${formatDuration(run.finished_at - run.started_at)}` : '';
  if (run.status === 'completed') return `Run completed${took}`;
  return run.error !== null && CARRIES_DURATION.test(run.error) ? 'Run failed' : `Run failed${took}`;
}
