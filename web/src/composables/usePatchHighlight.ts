import { computed, onBeforeUnmount, onMounted, ref, watch, type Ref } from 'vue';
import {
  emptyMarks,
  enhanceLines,
  lineContent,
  loadHighlighter,
  mergePieces,
  pairChangedLines,
  type Highlighter,
  type LanguageId,
  type PatchLine,
  type Piece,
} from '../patch/index.ts';

/**
 * Highlights a patch's lines and marks their changed words, a few hundred lines per task so a long
 * patch never holds the page; `touch` re-renders the blocks showing the lines done. The marks live
 * outside Vue's reactivity (a block re-renders through its version). Other lines (whitespace hidden
 * or shown) start again; a chain of the old lines stops.
 */
export function usePatchHighlight(
  lines: Ref<readonly PatchLine[]>,
  language: Ref<LanguageId | null>,
  touch: (indices: Iterable<number>) => void,
) {
  const highlighted = ref(false);
  const pairMap = computed(() => pairChangedLines(lines.value));
  let marks = emptyMarks(0);
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let alive = true;
  let generation = 0;

  function later(fn: () => void): void {
    const t = setTimeout(() => {
      timers.delete(t);
      if (alive) fn();
    }, 0);
    timers.add(t);
  }

  function step(hl: Highlighter | null, from: number, gen: number): void {
    if (gen !== generation) return;
    const { touched, next } = enhanceLines(lines.value, pairMap.value, hl, from, marks);
    touch(touched);
    if (next < lines.value.length) later(() => step(hl, next, gen));
    else highlighted.value = true;
  }

  async function start(): Promise<void> {
    const gen = ++generation;
    highlighted.value = false;
    marks = emptyMarks(lines.value.length);
    let hl: Highlighter | null = null;
    if (language.value) {
      try {
        hl = await loadHighlighter(language.value);
      } catch {
        hl = null; // the grammar chunk could not load: plain text
      }
    }
    if (alive && gen === generation) later(() => step(hl, 0, gen));
  }

  /** A line's text cut into pieces by its tokens and changed words, as far as they are known. */
  function pieces(index: number): Piece[] {
    const line = lines.value[index]!;
    return mergePieces(lineContent(line), marks.tokens[index] ?? null, marks.ranges[index] ?? []);
  }

  onMounted(() => void start());
  onBeforeUnmount(() => {
    alive = false;
    for (const t of timers) clearTimeout(t);
  });
  watch(lines, () => void start());

  return { highlighted, pieces };
}
