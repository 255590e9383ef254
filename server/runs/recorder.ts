import type {
  BridgeEvent,
  CompleteResponse,
  MessageEvent,
  MessageResponse,
  RunFinishedEvent,
  RunStartedEvent,
  SessionUpsertEvent,
  SessionUpsertResponse,
  StartResponse,
  ToolCompletedEvent,
  ToolStartedEvent,
  ViewedRequest,
  ViewedResponse,
} from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import type { Store } from '../store/index.ts';
import { runActivity, toolActivity, type StartFields } from './activity.ts';
import { sweepOld } from './age-sweep.ts';
import { close, type Closing } from './close.ts';
import { createContext, type RecorderDeps } from './context.ts';
import { deleteSession } from './deletion.ts';
import { message } from './messages.ts';
import type { RunObserver } from './observers.ts';
import { sessionUpsert } from './sessions.ts';
import { start } from './start.ts';
import { listViewed, setViewed } from './viewed.ts';

export type { RecorderDeps } from './context.ts';
export type { RunObserver } from './observers.ts';

/**
 * A session an edge sent (on a centre) is written by that edge alone: a bridge event for it here
 * (an agent or hook pointed at the centre, a revert on the centre) is refused with
 * `session_conflict` naming the owner, so the centre's copy never differs from its edge's.
 */
function ownedHere(store: Store) {
  // The lookups of one session run one after another, so events sent back to back still reach
  // their handlers in the order they were called (a completion finds its start in flight).
  const tails = new Map<string, Promise<unknown>>();
  return <E extends { session_id: string }, R>(fn: (e: E) => Promise<R>) =>
    (e: E): Promise<R> => {
      const id = e.session_id;
      const owner = (tails.get(id) ?? Promise.resolve()).then(() => store.ingest.ownerOf(id));
      const tail = owner.catch(() => undefined);
      tails.set(id, tail);
      void tail.then(() => {
        if (tails.get(id) === tail) tails.delete(id);
      });
      return owner.then((edge) => {
        if (edge !== null)
          throw new AppError(
            'session_conflict',
            `session ${JSON.stringify(id)} belongs to edge ${JSON.stringify(edge)}: it is written there`,
            {
              hint: "send this session's events to its edge (the centre's copy is for reading)",
              details: { reason: 'session_owned_by_edge', owner: edge },
            },
          );
        return fn(e);
      });
    };
}

/**
 * The recorder: one function per event type. Every run and tool call is recorded whether tracked or
 * not; a checkpoint is taken before a start is answered; a completion stores its change in one
 * transaction and emits `workspace.diff.completed` before the terminal event. Repeats answer as the
 * first did, also while the first is still in flight (the in-flight promise is shared) and after a
 * restart (the first answer is stored with the run). Runs and tool calls take the same path
 * (`start`, `close`), told apart by their kind.
 */
export function createRecorder(deps: RecorderDeps) {
  const ctx = createContext(deps);
  const local = ownedHere(ctx.store);

  const api = {
    sessionUpsert: local((e: Omit<SessionUpsertEvent, 'type'>): Promise<SessionUpsertResponse> =>
      sessionUpsert(ctx, e),
    ),
    message: local((e: Omit<MessageEvent, 'type'>): Promise<MessageResponse> => message(ctx, e)),
    runStarted: local((e: Omit<RunStartedEvent, 'type'> & Pick<StartFields, 'sameFolder'>): Promise<StartResponse> =>
      start(ctx, runActivity(e.session_id, e.run_id), {
        workspace: e.workspace,
        source: e.source,
        title: e.title,
        sameFolder: e.sameFolder,
      }),
    ),
    toolStarted: local((e: Omit<ToolStartedEvent, 'type'>): Promise<StartResponse> =>
      start(ctx, toolActivity(e.session_id, e.run_id, e.tool_call_id), { workspace: e.workspace, name: e.name }),
    ),
    toolCompleted: local((e: Omit<ToolCompletedEvent, 'type'>): Promise<CompleteResponse> =>
      close(ctx, toolActivity(e.session_id, e.run_id, e.tool_call_id), {
        status: e.error !== undefined ? 'failed' : 'completed',
        error: e.error ?? null,
      }),
    ),
    runCompleted: local((e: Omit<RunFinishedEvent, 'type'> & Pick<Closing, 'sameFolder'>): Promise<CompleteResponse> =>
      close(ctx, runActivity(e.session_id, e.run_id), {
        status: 'completed',
        error: e.error ?? null,
        ...(e.usage !== undefined ? { usage: e.usage } : {}),
        sameFolder: e.sameFolder,
      }),
    ),
    runFailed: local((e: Omit<RunFinishedEvent, 'type'> & Pick<Closing, 'sameFolder'>): Promise<CompleteResponse> =>
      close(ctx, runActivity(e.session_id, e.run_id), {
        status: 'failed',
        error: e.error ?? null,
        sameFolder: e.sameFolder,
      }),
    ),
  };

  /** Dispatches a validated event to its function; the answer is the HTTP response body. */
  function handle(e: BridgeEvent): Promise<unknown> {
    switch (e.type) {
      case 'session.upsert':
        return api.sessionUpsert(e);
      case 'message':
        return api.message(e);
      case 'run.started':
        return api.runStarted(e);
      case 'tool.started':
        return api.toolStarted(e);
      case 'tool.completed':
        return api.toolCompleted(e);
      case 'run.completed':
        return api.runCompleted(e);
      case 'run.failed':
        return api.runFailed(e);
    }
  }

  return {
    ...api,
    handle,
    deleteSession: (sessionId: string): Promise<boolean> => deleteSession(ctx, sessionId),
    sweepOld: (): Promise<number> => sweepOld(ctx),
    addObservers: (more: RunObserver[]): void => ctx.observers.add(more),
    /** Viewed marks: the session's (null when unknown), and marking or unmarking one file row. */
    viewed: {
      list: (sessionId: string): Promise<ViewedResponse | null> => listViewed(ctx, sessionId),
      set: (sessionId: string, target: ViewedRequest, viewed: boolean): Promise<ViewedResponse | null> =>
        setViewed(ctx, sessionId, target, viewed),
    },
    /**
     * Resolves once the contents of the change (of every change of the session, without a change
     * id) answered so far are written: what undo and the content routes wait for.
     */
    contentsSettled: (sessionId: string, changeId?: string): Promise<void> => ctx.fills.settled(sessionId, changeId),
    /** Resolves once no contents are being written (shutdown waits for it before the database closes). */
    contentsIdle: (): Promise<void> => ctx.fills.idle(),
  };
}

export type Recorder = ReturnType<typeof createRecorder>;
