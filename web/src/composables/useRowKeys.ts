import { onBeforeUnmount, onMounted } from 'vue';

const ROW_SELECTOR = '[data-testid="change-row-button"]';
/** A file's whole row: its button and, when open, its patch. */
const FILE_SELECTOR = '[data-testid="change-row"]';

const VIEWED_SELECTOR = '[data-testid="viewed-toggle"]';
/** A hunk's header row in an open patch, and the spacers standing for a windowed patch's rows not rendered. */
const HUNK_OR_SPACER = 'tr.pl-hunk, tr.patch-spacer';
/** Rows this close (px) to the reference line count as at it, not past it. */
const SLACK_PX = 2;
/** Frames a hunk key waits for a windowed patch to render the rows it scrolled to. */
const MAX_RENDER_WAITS = 30;

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

const frame = () => new Promise<void>((resolve) => requestAnimationFrame(() => resolve()));

/**
 * `n` / `p`: the next / previous hunk of the open patches, in page order (across files), from the
 * focused hunk or else the top of the viewport. A windowed patch keeps only the rows in view in the
 * page: reaching a spacer that stands for rows not rendered scrolls there and looks again once they
 * are, so no hunk is skipped.
 */
async function moveHunk(forward: boolean): Promise<void> {
  const active = document.activeElement;
  for (let wait = 0; wait <= MAX_RENDER_WAITS; wait++) {
    const at =
      active instanceof HTMLElement && active.matches('tr.pl-hunk') && active.isConnected
        ? active.getBoundingClientRect().top
        : 0;
    const targets = [...document.querySelectorAll<HTMLElement>(HUNK_OR_SPACER)].filter((el) => {
      const r = el.getBoundingClientRect();
      return r.height > 0 && (forward ? r.top > at + SLACK_PX : r.top < at - SLACK_PX);
    });
    const next = forward ? targets[0] : targets[targets.length - 1];
    if (!next) return;
    if (next.matches('tr.pl-hunk')) {
      next.focus({ preventScroll: true });
      next.scrollIntoView({ block: 'start' });
      return;
    }
    // A spacer: bring the rows it stands for into view (its near edge), then look again.
    const r = next.getBoundingClientRect();
    window.scrollBy(0, forward ? r.top - SLACK_PX * 4 : r.bottom - window.innerHeight + SLACK_PX * 4);
    await frame();
    await frame();
  }
}

/**
 * `v` marks the focused file viewed (or not). `n` / `p` move to the next / previous hunk (above).
 * `j` / `k` (or `]` / `[`) move the focus to the next / previous file row of the page (Tab reaches them too, and
 * Enter or Space toggles one: they are buttons); from inside an open patch they move from its file. With no row focused, `j` starts at the first row
 * below the top of the viewport and `k` at the last one above its bottom.
 */
export function useRowKeys(): void {
  const onKey = (e: KeyboardEvent) => {
    if (!['j', 'k', ']', '[', 'v', 'n', 'p'].includes(e.key)) return;
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    if (e.key === 'v') return toggleViewed(e);
    if (e.key === 'n' || e.key === 'p') {
      e.preventDefault();
      void moveHunk(e.key === 'n');
      return;
    }
    const forward = e.key === 'j' || e.key === ']';
    const rows = [...document.querySelectorAll<HTMLElement>(ROW_SELECTOR)];
    if (rows.length === 0) return;
    // Focus inside an open patch (a line, a button of the patch) counts as being on its file's row.
    const active = document.activeElement;
    const current = rows.findIndex(
      (r) => r === active || (active !== null && !!r.closest(FILE_SELECTOR)?.contains(active)),
    );
    let next: number;
    if (current >= 0) next = forward ? Math.min(rows.length - 1, current + 1) : Math.max(0, current - 1);
    else if (forward) {
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
