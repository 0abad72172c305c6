import { z } from 'zod';
import { crmRules as rules } from '@crm/validation';
import { s } from '../../http/validate';

export const Note = z.object({ content: s.requiredText(rules.NOTE_MAX) });
