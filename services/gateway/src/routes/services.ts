import type { RouteDeps, ServiceRoutes } from './deps';
import { aiRoutes } from './ai.routes';
import { knowledgeRoutes } from './knowledge.routes';
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
import { eventsRoutes } from './events.routes';
import { integrationsRoutes } from './integrations.routes';
import { reportsRoutes } from './reports.routes';
import { scoringRoutes } from './scoring.routes';
import { serviceLevelsRoutes } from './service-levels.routes';
import { tasksRoutes } from './tasks.routes';
import { viewsRoutes } from './views.routes';
import { webhooksRoutes } from './webhooks.routes';

export function serviceRoutes(deps: RouteDeps): ServiceRoutes[] {
  // contactFieldsRoutes first: its /contacts/export and /contacts/import come before crm's /contacts/:id.
  return [
    contactFieldsRoutes(deps),
    crmRoutes(deps),
    contactMergesRoutes(deps),
    chatRoutes(deps),
    conversationNotesRoutes(deps),
    scheduledMessagesRoutes(deps),
    serviceLevelsRoutes(deps),
    macrosRoutes(deps),
    viewsRoutes(deps),
    chatnetAccountRoutes(deps),
    automationRoutes(deps),
    emailRoutes(deps),
    webhooksRoutes(deps),
    eventsRoutes(deps),
    aiRoutes(deps),
    knowledgeRoutes(deps),
    reportsRoutes(deps),
    integrationsRoutes(deps),
    scoringRoutes(deps),
    analyticsRoutes(deps),
    tasksRoutes(deps),
  ];
}
