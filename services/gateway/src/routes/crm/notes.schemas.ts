import { z } from 'zod';
import { s } from '../../http/validate';

export const Note = z.object({ content: s.requiredText(10_000) });
