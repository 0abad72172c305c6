import type { z } from 'zod';
import type { crm } from '@crm/proto-types';
import { orNull } from '../http/shape';
import type { Task } from './tasks.schemas';

/** A task as the API shows it: absent values as null (notes, dueAt, the references, completedAt). */
export function taskOut(t: crm.Task__Output): z.input<typeof Task> {
  return {
    id: t.id,
    title: t.title,
    notes: orNull(t.notes),
    dueAt: t.dueAt ?? null,
    status: t.status as 'open' | 'done',
    assigneeId: t.assigneeId ?? null,
    contactId: t.contactId ?? null,
    conversationId: t.conversationId ?? null,
    createdBy: t.createdBy ?? null,
    createdAt: t.createdAt,
    completedAt: t.completedAt ?? null,
  };
}
