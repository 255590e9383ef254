/** Tests only: a scan worker whose walks and reads fail on marked folders (`faulty-scan-worker.ts`). */
export const FAULTY_SCAN_WORKER = new URL('./faulty-scan-worker.ts', import.meta.url);

/** The error a faulty read answers with. */
export const FAULTY_READ_MESSAGE = 'planted read failure';
/** The error a faulty walk answers with. */
export const FAULTY_WALK_MESSAGE = 'planted walk failure';
