import { z } from '@crm/config';
import { type AllowList, parseAllowList } from './address-policy';

/**
 * An environment variable holding the operator's allow-list of private addresses (`127.0.0.1,10.0.0.0/8`),
 * empty by default. A malformed entry stops the service at start, naming the variable and the entry.
 */
export function allowListEnv() {
  return z
    .string()
    .default('')
    .transform((raw, ctx): AllowList => {
      try {
        return parseAllowList(raw);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    });
}
