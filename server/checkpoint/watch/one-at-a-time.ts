/**
 * Calls for one workspace folder run one at a time, in the order they came (a listing made from
 * the watcher starts from the one before it); calls for other folders are not held up. A call that
 * fails does not stop the next.
 */
export function oneAtATime<T>(): (root: string, call: () => Promise<T>) => Promise<T> {
  const queues = new Map<string, Promise<unknown>>();
  return (root, call) => {
    const before = queues.get(root) ?? Promise.resolve();
    const run = before.then(call, call);
    const settled = run.catch(() => undefined);
    queues.set(root, settled);
    void settled.then(() => {
      if (queues.get(root) === settled) queues.delete(root);
    });
    return run;
  };
}
