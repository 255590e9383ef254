import { describe, expect, it } from 'vitest';
import { createHookStateStore } from './state.ts';
import { initialHookState } from './types.ts';

describe('hook session states', () => {
  it('keep at most the bound, dropping the least recently used first', () => {
    const store = createHookStateStore(3);
    const used = (n: number) => ({ ...initialHookState(), prompts: n });
    for (const k of ['a', 'b', 'c']) store.set(k, used(1));
    store.set('a', used(2)); // a is now the most recent
    store.set('d', used(1));
    expect(store.size).toBe(3);
    expect(store.has('b')).toBe(false);
    expect(['a', 'c', 'd'].every((k) => store.has(k))).toBe(true);
    expect(store.get('a').prompts).toBe(2);
    expect(store.get('b')).toEqual(initialHookState());
  });
});
