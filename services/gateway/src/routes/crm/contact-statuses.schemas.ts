import { z } from 'zod';
import { crmRules as rules } from '@crm/validation';
import { s } from '../../http/validate';
import { nulls, replyItem } from '../../docs/proto-schema';
import { position } from './common.schemas';

const StatusFields = {
  color: z.string().trim().regex(rules.COLOR_PATTERN, rules.COLOR_MESSAGE).or(z.literal('')).optional(),
  position: position.optional(),
};
export const NewStatus = z.object({ name: s.requiredText(rules.STATUS_NAME_MAX), ...StatusFields });
export const StatusPatch = z.object({ name: s.requiredText(rules.STATUS_NAME_MAX).optional(), ...StatusFields });

/** A custom contact status (statusOut is typed by it): crm's ContactStatus, no color as null. */
export const Status = nulls(replyItem('crm', 'ListContactStatuses'), ['color']);
