import { onScopeDispose, ref, type Ref } from 'vue';

/**
 * Copies text: the async Clipboard API when the page may use it (a secure context such as
 * localhost), else a hidden textarea and `execCommand('copy')` (plain http on a LAN address).
 */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return;
    } catch {
      // permission refused: try the fallback
    }
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  const focused = document.activeElement as HTMLElement | null;
  document.body.appendChild(area);
  area.select();
  try {
    if (!document.execCommand('copy')) throw new Error('the browser refused to copy');
  } finally {
    area.remove();
    focused?.focus();
  }
}

/** `copy(what, text)` plus a short status line (`Copied patch`, `Could not copy: ...`) for a live region. */
export function useCopy(): { status: Ref<string>; copy(what: string, text: string): Promise<void> } {
  const status = ref('');
  let timer: ReturnType<typeof setTimeout> | undefined;
  onScopeDispose(() => clearTimeout(timer));
  return {
    status,
    async copy(what, text) {
      clearTimeout(timer);
      try {
        await copyText(text);
        status.value = `Copied ${what}`;
      } catch (err) {
        status.value = `Could not copy: ${(err as Error).message}`;
      }
      timer = setTimeout(() => (status.value = ''), 2_500);
    },
  };
}
