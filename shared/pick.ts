/**
 * The fields `keys` of `obj`, in the order of `keys`: a JSON answer built this way keeps its field
 * order whatever the order of the object it came from.
 */
export function pick<T extends object, K extends keyof T>(obj: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const k of keys) out[k] = obj[k];
  return out;
}

/**
 * `fieldsOf<T>()([...])` returns the list unchanged, and compiles only when the list names every
 * field of T: a field added to a DTO without a place in the lists built from it fails to compile.
 */
export function fieldsOf<T>() {
  return <const F extends readonly (keyof T)[]>(
    fields: F & ([Exclude<keyof T, F[number]>] extends [never] ? unknown : never),
  ): F => fields;
}
