/** Tests only: a scan worker answering each call with its thread's id (`identified-scan-worker.ts`). */
export const IDENTIFIED_SCAN_WORKER = new URL('./identified-scan-worker.ts', import.meta.url);
