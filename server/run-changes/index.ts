/** `run_changes`: a run's stored change, or the delta so far of a run still open. */
export {
  pickRun,
  runChanges,
  runChangesInput,
  runChangesOutput,
  runChangesText,
  type RunChangesArgs,
  type RunChangesDeps,
} from './run-changes.ts';
