/** The API token, kept for this browser tab only (docs/contract.md section 6: asked once, kept for the tab). */
const KEY = 'rundiff.token';

export function getToken(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string | null): void {
  try {
    if (token === null) sessionStorage.removeItem(KEY);
    else sessionStorage.setItem(KEY, token);
  } catch {
    // Storage can be disabled; the token then lasts until reload, which is still usable.
    memoryToken = token;
    return;
  }
  memoryToken = token;
}

let memoryToken: string | null = null;

/** The token for requests: storage first, then the in-memory copy when storage is unavailable. */
export function currentToken(): string | null {
  return getToken() ?? memoryToken;
}
