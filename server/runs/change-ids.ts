import { runChangeId, toolChangeId } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import type { ActivityKind, StoreTx } from '../store/index.ts';

/**
 * A change named by the short id the timeline shows (`run:cc3e822d`, the first characters of a
 * generated id) is the session's one run or tool call whose id starts so. Shorter prefixes than
 * this name nothing but an exact id, so a slip of one or two characters is never taken for a run.
 */
export const MIN_PREFIX_CHARS = 4;
/** An ambiguous prefix is refused listing at most this many of the changes it could name. */
export const MAX_CANDIDATES = 10;

const KIND_OF: Record<string, ActivityKind> = { run: 'run', tool: 'tool' };
const CHANGE_ID: Record<ActivityKind, (id: string) => string> = { run: runChangeId, tool: toolChangeId };

/**
 * The change id `changeId` (`run:<id>` or `tool:<id>`, already validated) names in the session: an
 * exact id as it is; else the one activity of that kind whose id starts with it. An ambiguous
 * prefix is `change_ambiguous` with the candidates; one matching nothing is returned as given, so
 * the caller answers its own `not_found`. REST resolves every change id it is given here, so the
 * CLI and MCP (which go through REST) take the same short ids.
 */
export async function resolveChangeId(
  store: Pick<StoreTx, 'runs'>,
  sessionId: string,
  changeId: string,
): Promise<string> {
  const colon = changeId.indexOf(':');
  const kind = KIND_OF[changeId.slice(0, colon)];
  const id = changeId.slice(colon + 1);
  if (kind === undefined || [...id].length < MIN_PREFIX_CHARS) return changeId;
  if (await store.runs.get(kind, sessionId, id)) return changeId;
  const ids = await store.runs.idsStartingWith(kind, sessionId, id, MAX_CANDIDATES + 1);
  if (ids.length === 1) return CHANGE_ID[kind](ids[0]!);
  if (ids.length === 0) return changeId;
  const candidates = ids.slice(0, MAX_CANDIDATES).map(CHANGE_ID[kind]);
  const more = ids.length > MAX_CANDIDATES;
  throw new AppError(
    'change_ambiguous',
    `${changeId} names ${more ? `more than ${MAX_CANDIDATES}` : ids.length} changes in session ${JSON.stringify(sessionId)}: ${candidates.join(', ')}${more ? ', ...' : ''}`,
    { hint: 'give more characters of the id', details: { candidates, more } },
  );
}

/** What REST routes call to turn a change id they were given into the one it names. */
export type ChangeIdResolver = (sessionId: string, changeId: string) => Promise<string>;
