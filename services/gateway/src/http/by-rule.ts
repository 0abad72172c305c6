import { z } from 'zod';
import { AppError } from '@crm/grpc-kit';

/**
 * A value checked by one of @crm/validation's rule functions (the same function the owning service runs), its
 * refusal as this field's issue: a rule with more to it than a limit (a deal value's cents, a proxy URL) is then
 * written once.
 */
export function byRule<T extends z.ZodType>(schema: T, check: (value: z.infer<T>) => unknown) {
  return schema.superRefine((value, ctx) => {
    try {
      check(value);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      ctx.addIssue({ code: 'custom', message: err.details?.[0]?.message ?? err.message });
    }
  });
}
