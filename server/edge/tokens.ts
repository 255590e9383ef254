import { createHash, timingSafeEqual } from 'node:crypto';

/** Accepted edges by token. Tokens are compared by digest in constant time, every one of them. */
export interface EdgeTokens {
  /** The edge a presented token belongs to; null when it matches none. */
  edgeOf(presented: string | null): string | null;
  readonly size: number;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export function edgeTokens(accepted: readonly { edge: string; token: string }[]): EdgeTokens {
  const known = accepted.map((a) => ({ edge: a.edge, digest: digest(a.token) }));
  return {
    size: known.length,
    edgeOf(presented) {
      if (presented === null || presented === '') return null;
      const d = digest(presented);
      let found: string | null = null;
      // No early exit: the time taken does not tell which entry (or how many) were compared.
      for (const k of known) if (timingSafeEqual(d, k.digest) && found === null) found = k.edge;
      return found;
    },
  };
}
