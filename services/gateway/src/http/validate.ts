import type { Request } from 'express';
import { z } from 'zod';
import { badRequest, zodIssues } from './errors';

/** Parse the JSON body with a zod schema; a 400 names every bad field. */
export function body<S extends z.ZodType>(req: Request, schema: S): z.infer<S> {
  const parsed = schema.safeParse(req.body ?? {});
  if (!parsed.success) throw badRequest(zodIssues(parsed.error));
  return parsed.data;
}

export function query<S extends z.ZodType>(req: Request, schema: S): z.infer<S> {
  const parsed = schema.safeParse(req.query ?? {});
  if (!parsed.success) throw badRequest(zodIssues(parsed.error));
  return parsed.data;
}

/**
 * page/limit for internal lists: non-numeric values are a 400, out-of-range ones are clamped
 * (page ≥ 1, 1 ≤ limit ≤ max).
 */
export function pageParams(req: Request, defaultLimit: number, maxLimit = 100): { page: number; limit: number } {
  const num = (name: string, fallback: number) => {
    const raw = req.query[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (typeof raw !== 'string' || !Number.isFinite(n) || !/^-?\d+$/.test(raw)) throw badRequest([{ field: name, message: 'must be an integer' }]);
    return n;
  };
  const page = Math.max(1, num('page', 1));
  const limit = Math.min(maxLimit, Math.max(1, num('limit', defaultLimit)));
  return { page, limit };
}

/** An absolute http: or https: URL with a host. */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Every URL a client gives us is shown back to browsers (an avatar's src, a link) or dialled by a service,
 * so only http(s) is accepted: javascript:, data:, file: and the like would run or read in someone else's
 * page. `allowEmpty` for fields where "" clears the value.
 */
function httpUrl(opts: { max?: number; allowEmpty?: boolean } = {}) {
  const max = opts.max ?? 2000;
  return z
    .string({ error: 'must be a string' })
    .trim()
    .max(max, `must be at most ${max} characters`)
    .refine((v) => (opts.allowEmpty && v === '') || isHttpUrl(v), opts.allowEmpty ? 'must be an http or https URL (or empty)' : 'must be an http or https URL');
}

/** Common schema pieces. */
export const s = {
  text: (max = 200) => z.string().trim().max(max, `must be at most ${max} characters`),
  requiredText: (max = 200) => z.string({ error: 'is required' }).trim().min(1, 'is required').max(max, `must be at most ${max} characters`),
  email: () => z.string({ error: 'is required' }).trim().email('must be a valid email address'),
  httpUrl,
  enumOf: <T extends string>(values: readonly [T, ...T[]]) => z.enum(values, { error: `must be one of ${values.join(', ')}` }),
  optionalQueryEnum: <T extends string>(values: readonly [T, ...T[]]) =>
    z.enum(values, { error: `must be one of ${values.join(', ')}` }).optional(),
};
