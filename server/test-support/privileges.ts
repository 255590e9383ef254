import { spawnSync } from 'node:child_process';

/**
 * Runs a synchronous check as an unprivileged user (uid/gid 65534) when the tests run as root, so
 * permission checks apply; as any other user it simply runs it. Synchronous on purpose: the
 * effective uid is switched back before any other code of the process can run.
 */
export function asUnprivileged<T>(fn: () => T): T {
  if (process.getuid?.() !== 0) return fn();
  process.setegid!(65534);
  process.seteuid!(65534);
  try {
    return fn();
  } finally {
    process.seteuid!(0);
    process.setegid!(0);
  }
}

/**
 * The command and arguments that run `command` without the power to override file permissions.
 * As root that means dropping CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the bounding set
 * (`setpriv`, util-linux): the process keeps uid 0, so it can still use every folder the tests
 * made, but `chmod 000` denies it like anyone else. Switching to another uid instead would fail
 * wherever the checkout itself is not readable by that user. As any other user: unchanged.
 */
export function withoutPermissionOverride(command: string, args: readonly string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [command, [...args]];
  return ['setpriv', ['--bounding-set=-dac_override,-dac_read_search', '--', command, ...args]];
}

/** Whether a process started through `withoutPermissionOverride` could read `file` (the tests' positive control). */
export function readableWithoutOverride(file: string): boolean {
  const [cmd, args] = withoutPermissionOverride(process.execPath, [
    '-e',
    'require("fs").readFileSync(process.argv[1])',
    file,
  ]);
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
}
