import { createHash } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import { z } from 'zod';
import { EDGE_ENTRY_KINDS, TRUNCATED_REASONS, type EdgeEntryKind } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { errorTextSchema, idSchema, isValidId, workspaceSchema } from '../runs/index.ts';
import type { IngestBlob, IngestEntry } from '../store/index.ts';

/**
 * Validation of an edge's batch on the centre: the same id, workspace and text bounds as bridge
 * events, the stored columns' types and ranges, and every content checked against its sha256
 * before anything is written. A batch with one bad field is refused whole.
 */

/** Entries per batch (the edge sends at most 500). */
export const MAX_BATCH_ENTRIES = 2_000;

const MIB = 1024 * 1024;
const time = z.number().int().min(0).max(8.64e15);
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const flag = z.union([z.literal(0), z.literal(1)]);
const noNul = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !s.includes('\0'), { message: 'must not contain NUL' });
const shortText = noNul(500);
const sha256 = z.string().regex(/^[0-9a-f]{64}$/, { message: 'must be a lowercase hex sha256' });
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, { message: 'must be base64' });
/** A change id is its run's or tool call's id behind a short prefix (`run:`, `tool:`). */
const NOT_PRINTABLE = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u;
const isChangeId = (s: string) => s.length > 0 && [...s].length <= 220 && !NOT_PRINTABLE.test(s);
const changeId = z.string().refine(isChangeId, { message: 'must be 1-220 printable characters' });
const status = z.enum(['running', 'completed', 'failed']);
const UNTRACKED_REASON = shortText.nullable();

const session = z.object({
  title: noNul(2000).nullable(),
  workspace: workspaceSchema.nullable(),
  created_at: time,
  updated_at: time,
});

const message = z.object({
  role: z.enum(['user', 'assistant', 'tool']),
  content: z.string().refine((s) => Buffer.byteLength(s, 'utf8') <= MIB, { message: 'must be at most 1 MiB (UTF-8)' }),
  run_id: idSchema.nullable(),
  tool_call_id: idSchema.nullable(),
  created_at: time,
});

const activityFields = {
  status,
  workspace: workspaceSchema.nullable(),
  started_at: time,
  finished_at: time.nullable(),
  error: errorTextSchema.nullable(),
  change_id: changeId,
  tracking: flag,
  reason: UNTRACKED_REASON,
};
const run = z.object({
  ...activityFields,
  source: z.enum(['run', 'workflow', 'coding-agent', 'revert']),
  // An edge of an older version sends no run title.
  title: shortText.nullable().default(null),
});
const toolCall = z.object({ ...activityFields, run_id: idSchema, name: shortText.nullable() });

const pathText = noNul(64 * 1024);
const file = z.object({
  id: z.string().uuid(),
  ord: count,
  path: pathText,
  old_path: pathText.nullable(),
  path_base64: base64.nullable(),
  old_path_base64: base64.nullable(),
  change_type: z.enum(['added', 'modified', 'deleted', 'renamed']),
  additions: count,
  deletions: count,
  size_before: count.nullable(),
  size_after: count.nullable(),
  patch: z.string().nullable(),
  patch_bytes: count,
  truncated: flag,
  binary: flag,
  omitted_reason: shortText.nullable(),
  created_at: time,
});

const change = z.object({
  run_id: z.union([idSchema, z.literal('')]),
  tool_call_id: idSchema.nullable(),
  source: z.enum(['run', 'workflow', 'coding-agent', 'revert', 'tool']),
  workspace: workspaceSchema.nullable(),
  workspace_kind: z.enum(['git', 'filesystem', 'unknown']),
  started_at: time.nullable(),
  finished_at: time.nullable(),
  changed_count: count,
  added_count: count,
  modified_count: count,
  deleted_count: count,
  renamed_count: count,
  binary_count: count,
  truncated: flag,
  truncated_reasons: z.string().refine(
    (s) => {
      try {
        const v: unknown = JSON.parse(s);
        return Array.isArray(v) && v.every((r) => (TRUNCATED_REASONS as readonly unknown[]).includes(r));
      } catch {
        return false;
      }
    },
    { message: 'must be a JSON array of truncation reasons' },
  ),
  total_patch_bytes: count,
  overlapping: flag,
  omitted_count: count,
  created_at: time,
  files: z.array(file).refine((fs) => fs.every((f, i) => f.ord === i), { message: 'ord must be 0..n-1 in order' }),
});

const mode = noNul(16).nullable();
const contentRow = z.object({
  file_id: z.string().uuid(),
  before_mode: mode,
  before_sha256: sha256.nullable(),
  before_reason: shortText.nullable(),
  after_mode: mode,
  after_sha256: sha256.nullable(),
  after_reason: shortText.nullable(),
});
const contents = z.object({ change_id: changeId, rows: z.array(contentRow) });

const viewed = z.object({
  path: pathText,
  path_base64: z.union([base64, z.literal('')]),
  change_id: changeId,
  file_id: z.string().uuid(),
  viewed_at: time,
});

const ROW_SCHEMAS: Record<EdgeEntryKind, z.ZodType | null> = {
  session,
  session_deleted: null,
  message,
  run,
  tool_call: toolCall,
  change,
  contents,
  viewed,
};

const viewedItem = z
  .string()
  .transform((s, ctx) => {
    try {
      return JSON.parse(s) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON [path, path_base64]' });
      return z.NEVER;
    }
  })
  .pipe(z.tuple([pathText, z.string()]));

const entry = z.object({
  id: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  kind: z.enum(EDGE_ENTRY_KINDS as [EdgeEntryKind, ...EdgeEntryKind[]]),
  item: z.string().max(128 * 1024),
  row: z.record(z.string(), z.unknown()).nullable(),
  change_stored: z.literal(true).optional(),
});

const blob = z.object({
  sha256,
  size: count,
  codec: z.enum(['raw', 'deflate']),
  data: base64,
});

const batch = z.object({
  database_id: z.string().regex(/^[0-9a-f]{8,64}$/),
  session_id: idSchema,
  read_seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  entries: z.array(entry).min(1).max(MAX_BATCH_ENTRIES),
  blobs: z.array(blob).max(MAX_BATCH_ENTRIES),
});

export interface ParsedBatch {
  databaseId: string;
  sessionId: string;
  /** The edge outbox's highest position when the batch was read (absent from older edges). */
  readSeq: number | undefined;
  entries: IngestEntry[];
  blobs: Map<string, IngestBlob>;
  /** Entries of finished runs and tool calls whose change the edge holds (by entry id). */
  changeStored: Set<number>;
}

function refuse(issues: { field: string; message: string }[]): never {
  throw new AppError(
    'invalid_input',
    `invalid edge batch: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`,
    {
      details: { issues: issues.slice(0, 20) },
    },
  );
}

const issuesOf = (err: z.ZodError, prefix: string) =>
  err.issues.map((i) => ({
    field: [prefix, ...i.path].filter((p) => p !== '').join('.') || '(body)',
    message: i.message,
  }));

/** A content's bytes as kept, checked: the raw bytes must hash to the name and have the size given. */
function checkedBlob(b: z.infer<typeof blob>, index: number, maxBytes: number): IngestBlob {
  const data = Buffer.from(b.data, 'base64');
  const field = `blobs.${index}`;
  if (b.size > maxBytes) refuse([{ field, message: `is larger than ${maxBytes} bytes` }]);
  let raw: Buffer;
  try {
    // A deflated content never inflates past its announced size (a bomb is refused, not expanded).
    raw = b.codec === 'deflate' ? inflateSync(data, { maxOutputLength: Math.max(1, b.size) }) : data;
  } catch {
    return refuse([{ field, message: 'does not inflate to its size' }]);
  }
  if (raw.length !== b.size || createHash('sha256').update(raw).digest('hex') !== b.sha256)
    refuse([{ field, message: 'does not match its sha256 and size' }]);
  return { sha256: b.sha256, size: b.size, codec: b.codec, data };
}

/** Parses and checks a batch or throws `invalid_input` naming the bad fields. */
export function parseEdgeBatch(body: unknown, opts: { maxContentBytes: number }): ParsedBatch {
  const parsed = batch.safeParse(body);
  if (!parsed.success) refuse(issuesOf(parsed.error, ''));
  const b = parsed.data;
  const entries: IngestEntry[] = [];
  const changeStored = new Set<number>();
  let last = 0;
  for (const [i, e] of b.entries.entries()) {
    const field = `entries.${i}`;
    if (e.id <= last) refuse([{ field: `${field}.id`, message: 'ids must increase within a batch' }]);
    last = e.id;
    if (e.kind === 'viewed') {
      const item = viewedItem.safeParse(e.item);
      if (!item.success) refuse(issuesOf(item.error, `${field}.item`));
    } else if (e.kind === 'change' || e.kind === 'contents') {
      if (!isChangeId(e.item)) refuse([{ field: `${field}.item`, message: 'must be 1-220 printable characters' }]);
    } else if (!isValidId(e.item)) refuse([{ field: `${field}.item`, message: 'must be 1-200 printable characters' }]);
    if ((e.kind === 'session' || e.kind === 'session_deleted') && e.item !== b.session_id)
      refuse([{ field: `${field}.item`, message: "must be the batch's session_id" }]);
    const schema = ROW_SCHEMAS[e.kind];
    if (e.row !== null && schema === null) refuse([{ field: `${field}.row`, message: 'must be null' }]);
    let row: Record<string, unknown> | null = null;
    if (e.row !== null && schema !== null) {
      const r = schema.safeParse(e.row);
      if (!r.success) refuse(issuesOf(r.error, `${field}.row`));
      row = r.data as Record<string, unknown>;
      if (e.kind === 'contents' && row.change_id !== e.item)
        refuse([{ field: `${field}.row.change_id`, message: 'must be the entry item' }]);
    }
    if (e.change_stored === true) {
      if (e.kind !== 'run' && e.kind !== 'tool_call')
        refuse([{ field: `${field}.change_stored`, message: 'is only for runs and tool calls' }]);
      changeStored.add(e.id);
    }
    entries.push({ id: e.id, kind: e.kind, item: e.item, row });
  }
  const blobs = new Map<string, IngestBlob>();
  b.blobs.forEach((x, i) => blobs.set(x.sha256, checkedBlob(x, i, opts.maxContentBytes)));
  return {
    databaseId: b.database_id,
    sessionId: b.session_id,
    readSeq: b.read_seq,
    entries,
    blobs,
    changeStored,
  };
}
