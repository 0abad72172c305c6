import type { crm } from '@crm/proto-types';
import { orNull } from '../http/shape';

type Task = crm.Task__Output;

/** A task as the API shows it: absent values as null (notes, dueAt, the references, completedAt). */
export function taskOut(t: Task) {
  return {
    id: t.id,
    title: t.title,
    notes: orNull(t.notes),
    dueAt: t.dueAt ?? null,
    status: t.status,
    assigneeId: t.assigneeId ?? null,
    contactId: t.contactId ?? null,
    conversationId: t.conversationId ?? null,
    createdBy: t.createdBy ?? null,
    createdAt: t.createdAt,
    completedAt: t.completedAt ?? null,
  };
}
