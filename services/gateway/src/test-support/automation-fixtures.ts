// Sample automation answers for the mapper tests (not part of the build).
import type { automation } from '@crm/proto-types';
import { AT, ID, OTHER_ID } from './crm-fixtures';

export function rule(over: Partial<automation.Rule__Output> = {}): automation.Rule__Output {
  return {
    id: ID,
    name: 'Welcome',
    description: '',
    type: 'event',
    trigger: { type: 'contact_created', conditions: [{ field: 'source', operator: 'equals', valueJson: '"api"' }], keywords: [] },
    actions: [{ type: 'add_tag', tag: 'new', conditions: [], then: [], else: [], headers: {} }],
    status: 'draft',
    createdAt: AT,
    updatedAt: AT,
    runCount: 0,
    ...over,
  };
}

/** A step as it comes decoded: the lists and map only if and http_request steps use are there, empty. */
export function action(over: Partial<automation.Action__Output> & { type: string }): automation.Action__Output {
  return { conditions: [], then: [], else: [], headers: {}, ...over };
}

export function run(over: Partial<automation.Run__Output> = {}): automation.Run__Output {
  return {
    id: ID,
    ruleId: OTHER_ID,
    eventId: 'e1',
    eventType: 'contact.created',
    trigger: 'contact_created',
    contactId: '',
    conversationId: '',
    status: 'running',
    steps: [],
    startedAt: AT,
    actionsDone: 0,
    totalActions: 1,
    error: '',
    attempts: 1,
    createdAt: AT,
    updatedAt: AT,
    ...over,
  };
}

export function template(over: Partial<automation.Template__Output> = {}): automation.Template__Output {
  return { id: ID, name: 'Hello', content: 'Hi {{name}}', category: '', variables: ['name'], createdAt: AT, updatedAt: AT, ...over };
}

/** A draft campaign: no description, subject, schedule, variables or error. */
export function campaign(over: Partial<automation.Campaign__Output> = {}): automation.Campaign__Output {
  return {
    id: ID,
    name: 'Spring',
    description: '',
    type: 'broadcast',
    listId: OTHER_ID,
    templateId: OTHER_ID,
    variablesJson: '',
    status: 'draft',
    contactCount: 0,
    sentCount: 0,
    openRate: 0,
    counts: { total: 0, sent: 0, failed: 0, skipped: 0, pending: 0, replied: 0, cancelled: 0, seen: 0 },
    recipientsReady: false,
    lastError: '',
    createdAt: AT,
    updatedAt: AT,
    replyRate: 0,
    subject: '',
    ...over,
  };
}

/** A recipient not sent to yet, with neither phone nor email. */
export function recipient(over: Partial<automation.Recipient__Output> = {}): automation.Recipient__Output {
  return {
    contactId: OTHER_ID,
    name: 'Ann',
    phone: '',
    email: '',
    status: 'pending',
    error: '',
    attempts: 0,
    conversationId: '',
    messageId: '',
    updatedAt: AT,
    ...over,
  };
}

export function emailChannel(over: Partial<automation.EmailChannel__Output> = {}): automation.EmailChannel__Output {
  return {
    source: 'organization',
    host: 'smtp.example.com',
    port: 587,
    secure: false,
    user: 'mailer',
    passwordSet: true,
    fromAddress: 'crm@example.com',
    fromName: 'CRM',
    updatedAt: AT,
    ...over,
  };
}
