import { defineStore } from 'pinia';
import { ref } from 'vue';
import type {
  ApprovalRequestedPayload,
  PendingApproval,
  PendingApprovalsResponse,
  ToolCallRecord,
  ToolCallsResponse,
} from '../../../shared/index.ts';
import { ApiError, apiFetch, toApiError } from '../api/index.ts';
import { getSocket, onResync, subscribeSessions } from '../socket/index.ts';

/** A plan waiting for a decision, as announced (with who asks and its deadline). */
export type ShownApproval = ApprovalRequestedPayload;

const CALLS_LIMIT = 50;

async function getJson<T>(path: string): Promise<T> {
  const res = await apiFetch(path, { headers: { Accept: 'application/json' } });
  return (await res.json()) as T;
}

/** Adds a plan once (an event and the initial list may both carry it). */
export function addApproval(list: ShownApproval[], a: ShownApproval): ShownApproval[] {
  return list.some((x) => x.approval_id === a.approval_id) ? list : [...list, a];
}

/**
 * The git tools' side of the UI: the recent tool calls (`GET /api/tools/calls`) and the commit plans
 * waiting for a person (`tool.approval.requested` / `.resolved`, `GET /api/tools/approvals` for a page
 * opened while one waits).
 */
export const useToolsStore = defineStore('tools', () => {
  const calls = ref<ToolCallRecord[]>([]);
  const callsLoaded = ref(false);
  const callsError = ref<ApiError | null>(null);
  const approvals = ref<ShownApproval[]>([]);
  /** The approval whose decision is being sent (buttons disabled meanwhile). */
  const deciding = ref<string | null>(null);
  const decideError = ref<string | null>(null);
  let started = false;

  async function loadCalls(): Promise<void> {
    try {
      calls.value = (await getJson<ToolCallsResponse>(`/api/tools/calls?limit=${CALLS_LIMIT}`)).calls;
      callsError.value = null;
      callsLoaded.value = true;
    } catch (err) {
      callsError.value = toApiError(err);
    }
  }

  async function loadApprovals(): Promise<void> {
    try {
      const res = await getJson<PendingApprovalsResponse>('/api/tools/approvals');
      const listed = res.approvals.map((a: PendingApproval) => ({ ...a }));
      // Keep live ones the list may not have yet; drop ones that are gone.
      approvals.value = listed.reduce(addApproval, [] as ShownApproval[]);
    } catch {
      // The prompt is best effort on load; live events still bring new plans.
    }
  }

  function remove(id: string): void {
    approvals.value = approvals.value.filter((a) => a.approval_id !== id);
  }

  /** A denial may carry a reason: the agent reads it in its git_commit answer. */
  async function decide(id: string, decision: 'approve' | 'deny', reason = ''): Promise<void> {
    deciding.value = id;
    decideError.value = null;
    const body = decision === 'deny' && reason.trim() !== '' ? { decision, reason: reason.trim() } : { decision };
    try {
      await apiFetch(`/api/tools/approvals/${encodeURIComponent(id)}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      remove(id);
    } catch (err) {
      const e = toApiError(err);
      // Already decided elsewhere, timed out or withdrawn: it is not waiting any more.
      if (e.code === 'not_found') remove(id);
      decideError.value = e.message;
    } finally {
      deciding.value = null;
    }
  }

  /** Listens for approvals for the app's lifetime (the prompt shows on every page). */
  function start(): void {
    if (started) return;
    started = true;
    const socket = getSocket();
    socket.on('tool.approval.requested', (p) => {
      approvals.value = addApproval(approvals.value, { ...p, files: [...p.files] });
    });
    socket.on('tool.approval.resolved', (p) => {
      remove(p.approval_id);
      // The commit has answered (or is about to): its call joins the log.
      if (callsLoaded.value) void loadCalls();
    });
    onResync(() => {
      void loadApprovals();
      if (callsLoaded.value) void loadCalls();
    });
    void subscribeSessions().then(() => loadApprovals());
  }

  return {
    calls,
    callsLoaded,
    callsError,
    approvals,
    deciding,
    decideError,
    loadCalls,
    loadApprovals,
    decide,
    start,
  };
});
