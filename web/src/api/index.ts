/** The REST client of docs/contract.md section 3 (token header, 401 prompt, percent-encoded ids). */
export { ApiError, api, apiFetch, setTokenRequester, toApiError, type TokenRequester } from './client.ts';
export { currentToken, setToken } from './token.ts';
export { patchFileName, urls } from './urls.ts';
