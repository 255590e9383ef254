import path from 'node:path';
import { z } from 'zod';
import { BRIDGE_EVENT_TYPES, MAX_RUN_COST_USD, type BridgeEvent } from '../../shared/index.ts';
import { AppError } from '../errors.ts';

/** Validation of bridge events at the edge (HTTP and the in-process API share it). */

/** Control characters, lone surrogates and line/paragraph separators are not printable. */
const NOT_PRINTABLE = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u;
const codePoints = (s: string) => [...s].length;

/** Ids (`session_id`, `run_id`, `tool_call_id`, `message_id`): 1-200 printable characters. */
export function isValidId(s: string): boolean {
  const n = codePoints(s);
  return n >= 1 && n <= 200 && !NOT_PRINTABLE.test(s);
}

export const idSchema = z.string().refine(isValidId, { message: 'must be 1-200 printable characters' });

const MAX_PATH_CHARS = 4096;
export const workspaceSchema = z
  .string()
  .refine((s) => s.length > 0 && s.length <= MAX_PATH_CHARS, { message: `must be 1-${MAX_PATH_CHARS} characters` })
  .refine((s) => !s.includes('\0'), { message: 'must not contain NUL' })
  .refine((s) => path.isAbsolute(s), { message: 'must be an absolute path' });

/** A message's `content`: at most 1 MiB of UTF-8. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/** `error` texts of runs and tool calls (stack traces included) up to 64 KiB. */
export const MAX_ERROR_BYTES = 64 * 1024;
export const errorTextSchema = z
  .string()
  .refine((s) => Buffer.byteLength(s, 'utf8') <= MAX_ERROR_BYTES, { message: 'must be at most 64 KiB' });

/** A token count as an agent reports it: a whole number, at most 2^53 - 1. */
const tokens = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
/** US dollars an agent reported for a run: a finite amount from 0 to a billion. */
const dollars = z.number().nonnegative().max(MAX_RUN_COST_USD);
/** The tokens a run used and their price, as its agent reported them (stored with its end). */
const usageSchema = z.object({
  input: tokens,
  output: tokens,
  cache_read: tokens,
  cache_write: tokens,
  cost_usd: dollars.optional(),
});

/** A session's or a run's title: at most 500 characters, no NUL. */
const titleSchema = z
  .string()
  .refine((s) => codePoints(s) <= 500, { message: 'must be at most 500 characters' })
  .refine((s) => !s.includes('\0'), { message: 'must not contain NUL' });

export const bridgeEventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('session.upsert'),
    session_id: idSchema,
    title: titleSchema.optional(),
    workspace: workspaceSchema.optional(),
  }),
  z.object({
    type: z.literal('message'),
    session_id: idSchema,
    role: z.enum(['user', 'assistant', 'tool']),
    content: z
      .string()
      .refine((s) => Buffer.byteLength(s, 'utf8') <= MAX_MESSAGE_BYTES, { message: 'must be at most 1 MiB (UTF-8)' }),
    message_id: idSchema.optional(),
    run_id: idSchema.optional(),
    tool_call_id: idSchema.optional(),
    created_at: z.number().int().min(0).max(8.64e15).optional(),
  }),
  z.object({
    type: z.literal('run.started'),
    session_id: idSchema,
    run_id: idSchema,
    workspace: workspaceSchema.optional(),
    source: z.enum(['run', 'workflow', 'coding-agent']).optional(),
    title: titleSchema.optional(),
  }),
  z.object({
    type: z.literal('tool.started'),
    session_id: idSchema,
    run_id: idSchema,
    tool_call_id: idSchema,
    name: z
      .string()
      .refine((s) => codePoints(s) <= 500, { message: 'must be at most 500 characters' })
      .optional(),
    workspace: workspaceSchema.optional(),
  }),
  z.object({
    type: z.literal('tool.completed'),
    session_id: idSchema,
    run_id: idSchema,
    tool_call_id: idSchema,
    error: errorTextSchema.optional(),
  }),
  z.object({
    type: z.literal('run.completed'),
    session_id: idSchema,
    run_id: idSchema,
    error: errorTextSchema.optional(),
    usage: usageSchema.optional(),
  }),
  z.object({
    type: z.literal('run.failed'),
    session_id: idSchema,
    run_id: idSchema,
    error: errorTextSchema.optional(),
  }),
]);

/** Parses one bridge event or throws `invalid_input` naming every bad field. Unknown fields are ignored. */
export function parseBridgeEvent(body: unknown): BridgeEvent {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('invalid_input', 'the body must be one JSON object (one event per request)');
  }
  const type = (body as { type?: unknown }).type;
  if (typeof type !== 'string' || !(BRIDGE_EVENT_TYPES as readonly string[]).includes(type)) {
    throw new AppError('invalid_input', `unknown event type ${JSON.stringify(type ?? null)}`, {
      hint: `type must be one of: ${BRIDGE_EVENT_TYPES.join(', ')}`,
      details: { field: 'type' },
    });
  }
  const parsed = bridgeEventSchema.safeParse(body);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ field: i.path.join('.') || '(body)', message: i.message }));
    throw new AppError(
      'invalid_input',
      `invalid ${type} event: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`,
      {
        details: { issues },
      },
    );
  }
  return parsed.data;
}
