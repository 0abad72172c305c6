import { chatnetSandboxEnabled, type GatewayConfig, sandboxRoutesEnabled } from '../config';
import { openApiDocument } from './openapi';
import { aiRoutesArea } from '../routes/ai.routes';
import { knowledgeArea } from '../routes/knowledge.routes';
import {
  attachmentBytesRoutes,
  attachmentRoutes,
  folderRoutes,
  inboxRoutes,
  inboxSettingsRoutes,
  messageRoutes,
  presetRoutes,
  publicConversationRoutes,
} from '../routes/chat.routes';
import { conversationNoteRoutes } from '../routes/conversation-notes.routes';
import { macroRoutes } from '../routes/macros.routes';
import { scheduledMessageRoutes } from '../routes/scheduled-messages.routes';
import { automationAreas } from '../routes/automation.routes';
import { emailArea, emailLinkArea } from '../routes/email.routes';
import { chatnetOps } from '../routes/chatnet-accounts.routes';
import { contactMergeRoutes } from '../routes/contact-merges.routes';
import { contactExportRoutes, contactFieldRoutes, contactImportRoutes } from '../routes/contact-fields.routes';
import { crmAreas, publicCrmAreas } from '../routes/crm';
import { eventFeedOps } from '../routes/events.routes';
import { identityOps } from '../routes/identity.routes';
import { integrationRoutes, socialnetSandboxRoutes } from '../routes/integrations.routes';
import { healthArea } from '../routes/health.routes';
import { docsArea } from '../routes/docs.routes';
import { apiKeyCheckArea } from '../routes/public.routes';
import { scoringArea } from '../routes/scoring.routes';
import { hoursRoutes, slaReportRoutes, slaRoutes } from '../routes/service-levels.routes';
import { taskRoutes } from '../routes/tasks.routes';
import { viewRoutes } from '../routes/views.routes';
import { reportRoutes } from '../routes/reports.routes';
import { analyticsArea } from '../routes/analytics.routes';
import { auditRoutes } from '../routes/audit-log.routes';
import { webhookRoutes } from '../routes/webhooks.routes';
import type { Operation } from './registry';
import { WEBHOOK_EVENTS } from './webhook-events';

export { WEBHOOK_EVENTS };

/** Every documented operation, area by area (the order is the document's). */
export const OPERATIONS: Operation[] = [
  ...healthArea.ops,
  ...docsArea.ops,
  ...identityOps,
  ...auditRoutes.ops,
  ...crmAreas.flatMap((a) => a.ops),
  ...contactMergeRoutes.ops,
  ...taskRoutes.ops,
  ...contactFieldRoutes.ops,
  ...contactImportRoutes.ops,
  ...contactExportRoutes.ops,
  ...scoringArea.ops,
  // Conversations, messages, notes, folders, presets, inbox settings and attachments (messaging), in the document's
  // order of paths and tags.
  ...inboxRoutes.ops,
  ...messageRoutes.ops,
  ...scheduledMessageRoutes.ops,
  ...macroRoutes.ops,
  ...conversationNoteRoutes.ops,
  ...inboxSettingsRoutes.ops,
  ...folderRoutes.ops,
  ...presetRoutes.ops,
  ...attachmentBytesRoutes.ops,
  ...attachmentRoutes.ops,
  ...chatnetOps,
  ...hoursRoutes.ops,
  ...slaRoutes.ops,
  ...slaReportRoutes.ops,
  ...viewRoutes.ops,
  ...automationAreas.flatMap((a) => a.ops),
  ...emailArea.ops,
  ...emailLinkArea.ops,
  ...webhookRoutes.ops,
  ...eventFeedOps,
  ...aiRoutesArea.ops,
  ...knowledgeArea.ops,
  ...analyticsArea.ops,
  ...reportRoutes.ops,
  ...integrationRoutes.ops,
  ...socialnetSandboxRoutes.ops,
  ...publicCrmAreas.flatMap((a) => a.ops),
  ...publicConversationRoutes.ops,
  ...apiKeyCheckArea.ops,
];

/** The operations this gateway serves: sandbox control routes only when they are mounted. */
export function servedOperations(config: Pick<GatewayConfig, 'NODE_ENV' | 'CHATNET_DRIVER'>): Operation[] {
  return OPERATIONS.filter((o) => !o.sandbox || (o.sandbox === 'chatnet' ? chatnetSandboxEnabled(config) : sandboxRoutesEnabled(config)));
}

const WEBHOOKS_TEXT =
  'Webhooks are signed per Standard Webhooks: headers `webhook-id`, `webhook-timestamp`, `webhook-signature` ' +
  '(`v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the base64-decoded part of a `whsec_` secret, ' +
  'or by the UTF-8 bytes of a secret you typed yourself: 16 to 128 printable characters not starting with `whsec_`). ' +
  `Events: ${WEBHOOK_EVENTS.map((w) => w.name).join(', ')}.`;

/** How cursors behave, for the documents' descriptions. */
const CURSORS_TEXT =
  'Public lists page with an opaque `cursor`: each page returns `nextCursor` (null on the last page); pass it back as `cursor`, with the same filters, ' +
  'for the next page. Pages neither overlap nor leave gaps. Without `updatedSince` a list keeps its usual order; with it the list is ordered by ' +
  'updatedAt (messages: sentAt) ascending, then id, so an integrator can sync incrementally: page to the end, remember the largest updatedAt seen, and ' +
  'next time ask for `updatedSince` a few seconds before it (a change committed late can carry a slightly earlier time). A record updated while ' +
  'you page moves behind the cursor and appears again on a later page: that is its new change. A cursor only continues the list that returned ' +
  'it (400 naming `cursor` otherwise, or when it was altered). ';

/** Everything the gateway serves: the web app's API (bearer JWT), the public API (X-API-Key), sandbox control. */
export function gatewayDocument(ops: Operation[], serverUrl: string) {
  return openApiDocument(ops, {
    title: 'Messaging CRM API',
    serverUrl,
    description:
      'The internal API under /api/v1 takes `Authorization: Bearer <access token>` (from POST /api/v1/auth/login); ' +
      'the public API under /api/public takes the `X-API-Key` header (generate the key on the API & webhook settings page). ' +
      'Every error answers `{error: {code, message, details?}, requestId}`. ' +
      CURSORS_TEXT +
      WEBHOOKS_TEXT,
  });
}

/** The public API only, for integrators (and the settings page's documentation block). */
export function publicDocument(ops: Operation[], serverUrl: string) {
  return openApiDocument(
    ops.filter((o) => o.path.startsWith('/api/public/')),
    {
      title: 'Messaging CRM public API',
      serverUrl,
      description:
        'Authenticate every call with the `X-API-Key` header (generate the key on the API & webhook settings page). ' + CURSORS_TEXT + WEBHOOKS_TEXT,
    },
  );
}
