import { z } from 'zod';
import type { common } from '@crm/proto-types';
import { proto } from '../docs/proto-schema';

/** Every error answer: `{error: {code, message, details?}, requestId}` (http/errors.ts sendError). */
export const ErrorBody = z.object({
  error: z.object({
    code: z.string().meta({ description: 'stable machine-readable code, e.g. invalid_argument, not_found' }),
    message: z.string(),
    details: z
      .array(z.object({ field: z.string(), message: z.string() }))
      .optional()
      .meta({ description: 'one entry per bad field (400)' }),
  }),
  requestId: z.string().optional(),
});

/** Internal list pages: `{total, page, limit, pages}` (common.v1.Pagination). */
export const Pagination = proto('common/v1/common.proto', 'common.v1.Pagination') as unknown as z.ZodType<common.Pagination__Output>;

export const page = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), pagination: Pagination });
export const list = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item) });

/** A one-line answer to an action (`{message}`). */
export const MessageBody = z.object({ message: z.string() });
export const Ok = z.object({ success: z.literal(true) });
