import { Router } from 'express';
import type { CrmClient } from './crm-client';
import { ctxOf } from '../../http/principal';
import { body, pageParams } from '../../http/validate';
import { contactOut, detailOut, friendOut } from './contacts.out';
import { BulkContacts, ContactPatch, contactFiltersOf, customFieldsJson, NewContact } from './contacts.schemas';
import { paramsWithView, type ViewsClient } from '../views.apply';

/** Contacts (internal, bearer): list, create, bulk changes, detail, update, delete, friends. */
export function contactRoutes(internal: Router, crm: () => CrmClient, views: () => ViewsClient): void {
  internal.get('/contacts', async (req, res) => {
    const params = await paramsWithView(views, req, res, 'contacts');
    const out = await crm().ListContacts({ ...pageParams(req, 50), ...contactFiltersOf(params) }, ctxOf(req, res));
    res.json({ data: out.data.map(contactOut), pagination: out.pagination });
  });
  internal.post('/contacts', async (req, res) => {
    const { customFields, ...fields } = body(req, NewContact);
    const c = await crm().CreateContact({ ...fields, customFieldsJson: customFieldsJson(customFields) }, ctxOf(req, res));
    res.status(201).json(contactOut(c));
  });
  internal.post('/contacts/bulk', async (req, res) => {
    const b = body(req, BulkContacts);
    const params =
      b.action === 'tag' || b.action === 'untag'
        ? { tags: b.tags }
        : b.action === 'status'
          ? { status: b.status, statusId: b.statusId }
          : b.action === 'assign'
            ? { assignedUserId: b.assignedUserId ?? '' }
            : {};
    const out = await crm().BulkUpdateContacts({ ids: b.ids, action: b.action, ...params }, ctxOf(req, res));
    res.json({ updated: out.updated, failed: out.failed });
  });
  internal.get('/contacts/:id', async (req, res) => {
    res.json(detailOut(await crm().GetContact({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/contacts/:id', async (req, res) => {
    const { tags: t, customFields, ...patch } = body(req, ContactPatch);
    const c = await crm().UpdateContact(
      { id: req.params.id, ...patch, tags: t ? { values: t } : undefined, customFieldsJson: customFieldsJson(customFields) },
      ctxOf(req, res),
    );
    res.json(contactOut(c));
  });
  internal.delete('/contacts/:id', async (req, res) => {
    await crm().DeleteContact({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });
  internal.get('/contacts/:id/friends', async (req, res) => {
    const out = await crm().ListFriends({ id: req.params.id }, ctxOf(req, res));
    res.json(out.data.map(friendOut));
  });
}
