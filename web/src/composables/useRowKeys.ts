import { onBeforeUnmount, onMounted } from 'vue';

const ROW_SELECTOR = '[data-testid="change-row-button"]';
/** A file's whole row: its button and, when open, its patch. */
const FILE_SELECTOR = '[data-testid="change-row"]';

const VIEWED_SELECTOR = '[data-testid="viewed-toggle"]';

/** True when a key press belongs to something the user types into (a checkbox takes no letters). */
function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target instanceof HTMLInputElement && target.type === 'checkbox') return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/** `v`: toggles Viewed on the file the focus is on (its row, its Viewed box or inside its open patch). */
function toggleViewed(e: KeyboardEvent): void {
  const row = document.activeElement?.closest(FILE_SELECTOR);
  const box = row?.querySelector<HTMLInputElement>(VIEWED_SELECTOR);
  if (!box || box.disabled) return;
  e.preventDefault();
  box.click();
}

/**
 * `v` marks the focused file viewed (or not). `j` / `k` move the focus to the next / previous file row of the page (Tab reaches them too, and
 * Enter or Space toggles one: they are buttons); from inside an open patch they move from its file. With no row focused, `j` starts at the first row
 * below the top of the viewport and `k` at the last one above its bottom.
 */
export function useRowKeys(): void {
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== 'j' && e.key !== 'k' && e.key !== 'v') return;
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    if (e.key === 'v') return toggleViewed(e);
    const rows = [...document.querySelectorAll<HTMLElement>(ROW_SELECTOR)];
    if (rows.length === 0) return;
    // Focus inside an open patch (a line, a button of the patch) counts as being on its file's row.
    const active = document.activeElement;
    const current = rows.findIndex(
      (r) => r === active || (active !== null && !!r.closest(FILE_SELECTOR)?.contains(active)),
    );
    let next: number;
    if (current >= 0) next = e.key === 'j' ? Math.min(rows.length - 1, current + 1) : Math.max(0, current - 1);
    else if (e.key === 'j') {
      const below = rows.findIndex((r) => r.getBoundingClientRect().top >= 0);
      next = below >= 0 ? below : rows.length - 1;
    } else {
      const above = rows.findLastIndex((r) => r.getBoundingClientRect().bottom <= window.innerHeight);
      next = above >= 0 ? above : 0;
    }
    e.preventDefault();
    rows[next]!.focus();
    rows[next]!.scrollIntoView({ block: 'nearest' });
  };
  onMounted(() => document.addEventListener('keydown', onKey));
  onBeforeUnmount(() => document.removeEventListener('keydown', onKey));
}
