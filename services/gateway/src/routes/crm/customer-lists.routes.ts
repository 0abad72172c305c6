import { Router } from 'express';
import type { CrmClient } from './crm-client';
import { ctxOf } from '../../http/principal';
import { body, pageParams } from '../../http/validate';
import { memberOut } from './contacts.out';
import { customerListBriefOut, customerListCreatedOut, customerListOut } from './customer-lists.out';
import { CustomerListPatch, criteriaJson, NewCustomerList } from './customer-lists.schemas';

/** Customer lists (saved criteria over contacts, evaluated live; writes need campaigns:manage). */
export function customerListRoutes(internal: Router, crm: () => CrmClient): void {
  internal.get('/customer-lists', async (req, res) => {
    const out = await crm().ListCustomerLists({}, ctxOf(req, res));
    res.json(out.data.map(customerListBriefOut));
  });
  internal.post('/customer-lists', async (req, res) => {
    const b = body(req, NewCustomerList);
    const l = await crm().CreateCustomerList({ name: b.name, description: b.description, criteriaJson: criteriaJson(b.criteria) }, ctxOf(req, res));
    res.status(201).json(customerListCreatedOut(l));
  });
  internal.get('/customer-lists/:id', async (req, res) => {
    res.json(customerListOut(await crm().GetCustomerList({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/customer-lists/:id', async (req, res) => {
    const b = body(req, CustomerListPatch);
    const l = await crm().UpdateCustomerList(
      { id: req.params.id, name: b.name, description: b.description, criteriaJson: criteriaJson(b.criteria) },
      ctxOf(req, res),
    );
    res.json(customerListOut(l));
  });
  internal.delete('/customer-lists/:id', async (req, res) => {
    await crm().DeleteCustomerList({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });
  internal.post('/customer-lists/:id/activate', async (req, res) => {
    res.json(customerListOut(await crm().ActivateCustomerList({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.post('/customer-lists/:id/pause', async (req, res) => {
    res.json(customerListOut(await crm().PauseCustomerList({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.get('/customer-lists/:id/members', async (req, res) => {
    const out = await crm().ListCustomerListMembers({ id: req.params.id, ...pageParams(req, 50) }, ctxOf(req, res));
    res.json({ data: out.data.map(memberOut), pagination: out.pagination });
  });
}
