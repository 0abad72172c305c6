import { Router } from 'express';
import type { CrmClient } from './crm-client';
import { ctxOf } from '../../http/principal';
import { body } from '../../http/validate';
import { statusOut } from './contact-statuses.out';
import { NewStatus, StatusPatch } from './contact-statuses.schemas';

/** Custom statuses (contact.statusId); the spec has no way to create them, so these are added. */
export function contactStatusRoutes(internal: Router, crm: () => CrmClient): void {
  internal.get('/contact-statuses', async (req, res) => {
    res.json((await crm().ListContactStatuses({}, ctxOf(req, res))).data.map(statusOut));
  });
  internal.post('/contact-statuses', async (req, res) => {
    res.status(201).json(statusOut(await crm().CreateContactStatus(body(req, NewStatus), ctxOf(req, res))));
  });
  internal.get('/contact-statuses/:id', async (req, res) => {
    // The one status asked for (crm counts its contacts alone), not the whole list searched here.
    res.json(statusOut(await crm().GetContactStatus({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/contact-statuses/:id', async (req, res) => {
    res.json(statusOut(await crm().UpdateContactStatus({ id: req.params.id, ...body(req, StatusPatch) }, ctxOf(req, res))));
  });
  internal.delete('/contact-statuses/:id', async (req, res) => {
    await crm().DeleteContactStatus({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });
}
