import type { z } from 'zod';
import type { messaging } from '@crm/proto-types';
import type { ViewResource } from './views.apply';
import type { View } from './views.schemas';

/** A saved view: ownerId null for a shared view made with an API key. */
export function viewOut(v: messaging.View__Output): z.input<typeof View> {
  return {
    id: v.id,
    name: v.name,
    resource: v.resource as ViewResource,
    filters: { ...v.filters },
    shared: v.shared,
    ownerId: v.ownerId ?? null,
    createdAt: v.createdAt,
    updatedAt: v.updatedAt,
  };
}
