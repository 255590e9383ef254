import type { CheckpointEngine } from '../checkpoint/types.ts';
import type { Store } from '../store/index.ts';
import { realOrResolved } from '../fs/index.ts';
import { isInside } from '../workspace/index.ts';

/**
 * The session a commit without `session_id` belongs to: the one session with a run or tool call in
 * progress (open in the store and live in the checkpoint engine) whose workspace contains the
 * repository or lies inside it. None when no session or several sessions are at work there: a
 * guess between two would put the commit in the wrong timeline.
 */
export async function sessionAtWork(
  deps: { store: Store; engine: Pick<CheckpointEngine, 'has'> },
  repositoryRoot: string,
): Promise<string | null> {
  const root = realOrResolved(repositoryRoot);
  const found = new Set<string>();
  for (const open of await deps.store.runs.openEverywhere()) {
    if (open.workspace === null || !deps.engine.has(open.session_id, open.change_id)) continue;
    const ws = realOrResolved(open.workspace);
    if (isInside(ws, root) || isInside(root, ws)) found.add(open.session_id);
  }
  return found.size === 1 ? [...found][0]! : null;
}
