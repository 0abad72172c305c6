import type { Request, Router } from 'express';
import type { RouteDeps } from './deps';
import { aiRoutes } from './ai.routes';
import { analyticsRoutes } from './analytics.routes';
import { automationRoutes } from './automation.routes';
import { chatRoutes } from './chat.routes';
import { chatnetAccountRoutes } from './chatnet-accounts.routes';
import { contactMergesRoutes } from './contact-merges.routes';
import { conversationNotesRoutes } from './conversation-notes.routes';
import { scheduledMessagesRoutes } from './scheduled-messages.routes';
import { macrosRoutes } from './macros.routes';
import { contactFieldsRoutes } from './contact-fields.routes';
import { crmRoutes } from './crm';
import { emailRoutes } from './email.routes';
import { integrationsRoutes } from './integrations.routes';
import { reportsRoutes } from './reports.routes';
import { scoringRoutes } from './scoring.routes';
import { serviceLevelsRoutes } from './service-levels.routes';
import { tasksRoutes } from './tasks.routes';
import { viewsRoutes } from './views.routes';
import { webhooksRoutes } from './webhooks.routes';

/**
 * The routes of each backend service, one module per service. `internal` is mounted under /api/v1
 * behind the bearer token, `public` under /api/public behind the API key, `root` at / (pages,
 * sandbox control) with whatever auth the module applies itself. `stream` is mounted under /api/v1
 * before the JSON body parser (request bodies proxied as streams), and each of its routes applies its own auth.
 * `parsesOwnBody` marks requests the shared JSON parser must leave to the module's own (larger) one.
 */
export interface ServiceRoutes {
  stream?: Router;
  /** Requests the module parses itself (a bigger body limit, after its own auth): the shared JSON parser leaves them. */
  parsesOwnBody?: (req: Request) => boolean;
  internal?: Router;
  public?: Router;
  root?: Router;
}

export function serviceRoutes(deps: RouteDeps): ServiceRoutes[] {
  // contactFieldsRoutes first: its /contacts/export and /contacts/import come before crm's /contacts/:id.
  return [contactFieldsRoutes(deps), crmRoutes(deps), contactMergesRoutes(deps), chatRoutes(deps), conversationNotesRoutes(deps), scheduledMessagesRoutes(deps), serviceLevelsRoutes(deps), macrosRoutes(deps), viewsRoutes(deps), chatnetAccountRoutes(deps), automationRoutes(deps), emailRoutes(deps), webhooksRoutes(deps), aiRoutes(deps), reportsRoutes(deps), integrationsRoutes(deps), scoringRoutes(deps), analyticsRoutes(deps), tasksRoutes(deps)];
}
