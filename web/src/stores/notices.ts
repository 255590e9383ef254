import { defineStore } from 'pinia';
import { ref, watch } from 'vue';
import { rememberedSwitch } from '../composables/remembered.ts';
import { approvalNotice, countsOf, runNotice, titleWithCount, type Notice, type RunCounts } from '../notify/notices.ts';
import { getSocket } from '../socket/index.ts';
import { useSessionsStore } from './sessions.ts';

/** Whether the browser can show notifications at all. */
const supported = (): boolean => typeof window !== 'undefined' && 'Notification' in window;

/** The page is in front of the person: visible and focused. */
const looking = (): boolean => document.visibilityState === 'visible' && document.hasFocus();

/**
 * Telling a person who is not looking: a run that ended or failed, a commit waiting for approval.
 * While the page is hidden or unfocused each such event adds to a count in the tab's title
 * (`(2) rundiff`), cleared when the page is looked at again; browser notifications are opt-in
 * (asked for when turned on, remembered per browser) and shown only then too. Clicking one brings
 * the page forward on the session (or the tools page for an approval).
 */
export const useNoticesStore = defineStore('notices', () => {
  /** The person's choice; notifications show only while the browser also allows them. */
  const enabled = rememberedSwitch('rundiff.notifications');
  const permission = ref<NotificationPermission | 'unsupported'>(supported() ? Notification.permission : 'unsupported');
  const unseen = ref(0);
  /** Why turning notifications on did not work, in words. */
  const problem = ref<string | null>(null);
  const counts = new Map<string, RunCounts>();
  const shown = new Set<string>();
  let started = false;
  /** Brings the app to what a clicked notice is about (set by `start`). */
  let open: (n: Notice) => void = () => {};

  async function setEnabled(on: boolean): Promise<void> {
    problem.value = null;
    if (!on) {
      enabled.value = false;
      return;
    }
    if (!supported()) {
      problem.value = 'This browser cannot show notifications.';
      return;
    }
    if (Notification.permission === 'default') permission.value = await Notification.requestPermission();
    else permission.value = Notification.permission;
    if (permission.value === 'granted') enabled.value = true;
    else problem.value = 'Notifications are blocked for this page: allow them in the browser’s site settings.';
  }

  function tell(n: Notice): void {
    if (shown.has(n.key) || looking()) return;
    shown.add(n.key);
    unseen.value += 1;
    if (!enabled.value || !supported() || Notification.permission !== 'granted') return;
    const shownNotice = new Notification(n.title, { body: n.body, tag: n.key });
    shownNotice.onclick = () => {
      window.focus();
      open(n);
      shownNotice.close();
    };
  }

  function seen(): void {
    if (looking()) unseen.value = 0;
  }

  /** Listens for the app's lifetime; `opener` shows what a clicked notice is about. */
  function start(opener: (n: Notice) => void): void {
    if (started) return;
    started = true;
    open = opener;
    const sessions = useSessionsStore();
    // What the list already holds is the starting point: only what changes after it is told.
    watch(
      () => sessions.sessions,
      (list) => {
        for (const s of list) if (!counts.has(s.id)) counts.set(s.id, countsOf(s));
      },
      { immediate: true },
    );
    const socket = getSocket();
    socket.on('session.updated', ({ session }) => {
      const notice = runNotice(counts.get(session.id), session);
      counts.set(session.id, countsOf(session));
      if (notice) tell(notice);
    });
    socket.on('session.deleted', ({ session_id }) => counts.delete(session_id));
    socket.on('tool.approval.requested', (p) => tell(approvalNotice(p)));
    document.addEventListener('visibilitychange', seen);
    window.addEventListener('focus', seen);
    watch(unseen, (n) => {
      document.title = titleWithCount(document.title, n);
    });
  }

  return { enabled, permission, unseen, problem, setEnabled, start };
});
