/** Types of frames.js (plain JS so the git helper process loads it without a TypeScript loader). */
export declare const HEADER_BYTES: number;
export declare const SPAWN: number;
export declare const STDIN: number;
export declare const STDIN_END: number;
export declare const KILL: number;
export declare const READY: number;
export declare const SPAWNED: number;
export declare const STDOUT: number;
export declare const STDIN_ACK: number;
export declare const STDERR: number;
export declare const EXIT: number;
export declare const SPAWN_ERROR: number;
export declare const KILLED: number;
export declare function encodeFrame(type: number, id: number, payload: Buffer | undefined): Buffer;
export declare function encodeJsonFrame(type: number, id: number, value: unknown): Buffer;
export declare function encodeU32Frame(type: number, id: number, n: number): Buffer;
export declare function createDecoder(
  onFrame: (type: number, id: number, payload: Buffer) => void,
  maxPayloadBytes?: number,
): (chunk: Buffer) => void;
