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
