/**
 * The fields `keys` of `obj`, in the order of `keys`: a JSON answer built this way keeps its field
 * order whatever the order of the object it came from.
 */
export function pick<T extends object, K extends keyof T>(obj: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const k of keys) out[k] = obj[k];
  return out;
}
