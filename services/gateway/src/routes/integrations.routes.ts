import { Router } from 'express';
import { z } from 'zod';
import { sandboxRoutesEnabled } from '../config';
import type { RouteDeps, ServiceRoutes } from './deps';
import { credentialsOut, integrationOut, leadSyncOut, leadSyncStartedOut } from './integrations.out';
import { ctxOf } from '../http/principal';
import { body, s } from '../http/validate';

// ------------------------------------------------------------------------------------------- request bodies

export const Credentials = z.object({
  // "" removes the token; the key itself is required so a typo never removes it by accident.
  accessToken: z.string({ error: 'is required ("" removes the token)' }).trim().max(4096, 'must be at most 4096 characters'),
});

export const SyncRequest = z.object({
  pageId: s.requiredText(128),
  formId: s.requiredText(128),
});

export const SandboxPage = z.object({
  name: s.requiredText(200),
  followers: z
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(0, 'must not be negative')
    .max(2_000_000_000, 'must be at most 2000000000')
    .default(0),
});

export const SandboxForm = z.object({ name: s.requiredText(200) });

const answer = z.union([z.string().max(2000, 'must be at most 2000 characters'), z.number(), z.boolean()], {
  error: 'must be a string, number or boolean',
});

/** A lead as a form submission: the known keys, `fields` for the other answers, and any other key as an answer too. */
export const SandboxLead = z
  .object({
    id: z
      .string({ error: 'must be a string' })
      .trim()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, - or _')
      .optional(),
    fullName: z.string({ error: 'must be a string' }).max(500, 'must be at most 500 characters').default(''),
    phone: z.string({ error: 'must be a string' }).max(100, 'must be at most 100 characters').default(''),
    email: z.string({ error: 'must be a string' }).max(500, 'must be at most 500 characters').default(''),
    fields: z.record(z.string().max(200, 'keys must be at most 200 characters'), answer).optional(),
  })
  .catchall(answer);

export const SandboxLeads = z.object({
  leads: z.array(SandboxLead, { error: 'must be an array of leads' }).min(1, 'must have at least one lead').max(5000, 'must have at most 5000 leads'),
});

export const SandboxOutage = z.object({
  afterLeads: z
    .number({ error: 'is required: an integer, or null to end the outage' })
    .int('must be an integer')
    .min(0, 'must not be negative')
    .nullable(),
});

function leadIn(l: z.infer<typeof SandboxLead>) {
  const { id, fullName, phone, email, fields, ...rest } = l;
  const answers: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...rest, ...(fields ?? {}) })) answers[k] = String(v);
  return { id: id ?? '', fullName, phone, email, fields: answers };
}

/**
 * Integrations (internal API): the social network's pages, connecting them, lead syncs; and the sandbox
 * network's control routes at the root. The sandbox routes need an owner's or admin's bearer token; crm
 * answers 404 for them unless SOCIALNET_DRIVER=sandbox, and in production they are not mounted at all.
 */
export function integrationsRoutes({ clients, auth, config }: RouteDeps): ServiceRoutes {
  const crm = () => clients.crmIntegrations;

  const internal = Router();
  internal.get('/integrations', async (req, res) => {
    const out = await crm().ListIntegrations({}, ctxOf(req, res));
    res.json(out.data.map(integrationOut));
  });
  internal.delete('/integrations/:id', async (req, res) => {
    await crm().DisconnectIntegration({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });
  internal.get('/integrations/socialnet/credentials', async (req, res) => {
    res.json(credentialsOut(await crm().GetSocialnetCredentials({}, ctxOf(req, res))));
  });
  internal.put('/integrations/socialnet/credentials', async (req, res) => {
    res.json(credentialsOut(await crm().SetSocialnetCredentials(body(req, Credentials), ctxOf(req, res))));
  });
  internal.get('/integrations/socialnet/pages', async (req, res) => {
    const out = await crm().ListSocialnetPages({}, ctxOf(req, res));
    res.json(out.data);
  });
  internal.post('/integrations/socialnet/pages/:id/connect', async (req, res) => {
    const out = await crm().ConnectSocialnetPage({ id: req.params.id }, ctxOf(req, res));
    res.status(out.created ? 201 : 200).json(out.integration ? integrationOut(out.integration) : null);
  });
  internal.get('/integrations/socialnet/pages/:id/forms', async (req, res) => {
    const out = await crm().ListSocialnetForms({ id: req.params.id }, ctxOf(req, res));
    res.json(out.data);
  });
  internal.post('/integrations/socialnet/leads/sync', async (req, res) => {
    const b = body(req, SyncRequest);
    res.status(202).json(leadSyncStartedOut(await crm().StartLeadSync(b, ctxOf(req, res))));
  });
  internal.get('/integrations/socialnet/leads/sync/:syncId', async (req, res) => {
    res.json(leadSyncOut(await crm().GetLeadSync({ id: req.params.syncId }, ctxOf(req, res))));
  });

  const root = Router();
  // The chat network's module may have checked the token already (its `/sandbox` prefix covers these paths):
  // check once, so a call spends one unit of the per-user rate limit.
  root.use('/sandbox/socialnet', (req, res, next) => (res.locals.principal ? next() : auth.bearer(req, res, next)));
  root.post('/sandbox/socialnet/pages', async (req, res) => {
    res.status(201).json(await crm().SandboxCreatePage(body(req, SandboxPage), ctxOf(req, res)));
  });
  root.post('/sandbox/socialnet/pages/:pageId/forms', async (req, res) => {
    res.status(201).json(await crm().SandboxCreateForm({ pageId: req.params.pageId, ...body(req, SandboxForm) }, ctxOf(req, res)));
  });
  root.post('/sandbox/socialnet/forms/:formId/leads', async (req, res) => {
    const b = body(req, SandboxLeads);
    res.json(await crm().SandboxAddLeads({ formId: req.params.formId, leads: b.leads.map(leadIn) }, ctxOf(req, res)));
  });
  root.post('/sandbox/socialnet/pages/:pageId/outage', async (req, res) => {
    const b = body(req, SandboxOutage);
    const out = await crm().SandboxSetOutage({ pageId: req.params.pageId, afterLeads: b.afterLeads ?? undefined }, ctxOf(req, res));
    res.json({ message: out.message });
  });
  root.post('/sandbox/socialnet/pages/:pageId/revoke', async (req, res) => {
    const out = await crm().SandboxRevokeToken({ id: req.params.pageId }, ctxOf(req, res));
    res.json({ message: out.message });
  });

  return { internal, root: sandboxRoutesEnabled(config) ? root : undefined };
}
