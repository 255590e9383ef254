import { z } from 'zod';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/**
 * A tool as `rundiff mcp` lists it: JSON Schemas (draft 7) of its zod input and output, and its
 * hints. Not idempotent unless said; nothing reaches outside the workspace (`openWorldHint: false`).
 */
export function toolListing(t: {
  name: string;
  title: string;
  description: string;
  input: z.ZodType;
  output: z.ZodType;
  readOnly: boolean;
  destructive?: boolean;
  idempotent?: boolean;
}): Tool {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: z.toJSONSchema(t.input, { target: 'draft-7', io: 'input' }) as Tool['inputSchema'],
    outputSchema: z.toJSONSchema(t.output, { target: 'draft-7', io: 'output' }) as Tool['outputSchema'],
    annotations: {
      title: t.title,
      readOnlyHint: t.readOnly,
      destructiveHint: t.destructive ?? false,
      idempotentHint: t.idempotent ?? false,
      openWorldHint: false,
    },
  };
}
