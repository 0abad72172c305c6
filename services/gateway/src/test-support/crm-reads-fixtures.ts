// Sample answers of crm's scoring, integrations, reports and analytics services for the mapper tests (not part of the build).
import type { crm } from '@crm/proto-types';
import { AT, ID, OTHER_ID } from './crm-fixtures';

export function leadSync(over: Partial<crm.LeadSync__Output> = {}): crm.LeadSync__Output {
  return {
    id: ID,
    integrationId: OTHER_ID,
    pageId: 'p1',
    formId: 'f1',
    status: 'processing',
    estimatedCount: 3,
    counts: { created: 0, linked: 0, alreadyImported: 0, skipped: 0 },
    skippedLeads: [],
    createdAt: AT,
    updatedAt: AT,
    started: true,
    ...over,
  };
}

/** A report still generating: no completion, error, row count or author. */
export function report(over: Partial<crm.Report__Output> = {}): crm.Report__Output {
  return {
    id: ID,
    name: 'Q1',
    status: 'generating',
    createdAt: AT,
    metrics: ['contacts'],
    dimensions: [],
    dateFrom: AT,
    dateTo: AT,
    filtersJson: '',
    ...over,
  };
}

/** Team performance of a period with one agent and no data: the rates are unset. */
export function teamPerformance(): crm.TeamPerformance__Output {
  return {
    period: { from: AT, to: AT },
    team: [{ userId: ID, name: 'Ann', contactsAssigned: 0, messagesReplied: 0, revenueGenerated: 0, responses: 0 }],
    teamTotal: { contactsAssigned: 0, messagesReplied: 0, revenueGenerated: 0 },
  };
}

export function scoringRule(over: Partial<crm.ScoringRule__Output> = {}): crm.ScoringRule__Output {
  return { id: ID, name: 'Tagged', condition: 'has_tag', value: '', points: 5, weight: 1, createdAt: AT, updatedAt: AT, ...over };
}
