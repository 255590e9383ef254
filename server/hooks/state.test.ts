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

describe('a hook session state dropped from the bound', () => {
  it('is handed to onEvict with its last state, once, and a kept one never is', () => {
    const evicted: [string, number][] = [];
    const store = createHookStateStore(2, (key, state) => evicted.push([key, state.prompts]));
    store.set('a', { ...initialHookState(), prompts: 1 });
    store.set('b', { ...initialHookState(), prompts: 1 });
    store.set('a', { ...initialHookState(), prompts: 2 });
    expect(evicted).toEqual([]);
    store.set('c', { ...initialHookState(), prompts: 1 });
    expect(evicted).toEqual([['b', 1]]);
  });
});
