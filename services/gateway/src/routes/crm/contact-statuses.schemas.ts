import { z } from 'zod';
import { s } from '../../http/validate';

const StatusFields = {
  color: z.string().trim().regex(/^#[0-9a-fA-F]{6}$/, 'must be a hex color such as #22c55e').or(z.literal('')).optional(),
  position: z.number({ error: 'must be an integer' }).int('must be an integer').min(0).max(10_000).optional(),
};
export const NewStatus = z.object({ name: s.requiredText(100), ...StatusFields });
export const StatusPatch = z.object({ name: s.requiredText(100).optional(), ...StatusFields });
