import { aiConfigOut, modelsOut } from './ai.out';
import { responseTimeOut, teamPerformanceOut } from './analytics.out';
import { credentialsOut, integrationOut, leadSyncOut, leadSyncStartedOut } from './integrations.out';
import { reportOut } from './reports.out';
import { scoringRuleOut } from './scoring.out';
import { AT, ID, OTHER_ID } from '../test-support/crm-fixtures';
import { leadSync, report, scoringRule, teamPerformance } from '../test-support/crm-reads-fixtures';

describe('ai, integrations, scoring, reports and analytics mappers', () => {
  it('aiConfigOut: no model chosen is null', () => {
    const c = {
      provider: 'local',
      model: '',
      dailyQuota: 100,
      enabled: true,
      status: 'ok',
      statusMessage: 'local',
      engine: 'local',
      effectiveModel: 'local',
      usedToday: 0,
      remainingToday: 100,
      quotaResetsAt: AT,
      fallbackProviders: [],
      autoReply: null,
    };
    expect(aiConfigOut(c)).toEqual({ ...c, model: null, autoReply: null });
    expect(aiConfigOut({ ...c, model: 'gpt', updatedAt: AT })).toMatchObject({ model: 'gpt', updatedAt: AT });
  });

  it('modelsOut: error only when the vendor could not be asked', () => {
    expect(modelsOut({ models: [{ title: 'A', value: 'a' }] })).toEqual({ models: [{ title: 'A', value: 'a' }] });
    expect(modelsOut({ models: [], error: 'no key' })).toEqual({ models: [], error: 'no key' });
  });

  it('integrationOut, credentialsOut: config as an object, absent times null', () => {
    const i = { id: ID, type: 'socialnet', name: 'Page', status: 'connected', configJson: '{"pageId":"p1"}', createdAt: AT };
    expect(integrationOut(i)).toEqual({
      id: ID,
      type: 'socialnet',
      name: 'Page',
      status: 'connected',
      config: { pageId: 'p1' },
      lastSync: null,
      createdAt: AT,
    });
    expect(integrationOut({ ...i, configJson: '' }).config).toEqual({});
    expect(credentialsOut({ hasToken: false, tokenMask: '' })).toEqual({ hasToken: false, tokenMask: '', updatedAt: null });
  });

  it('leadSyncOut and leadSyncStartedOut: error null until it failed; a sync already running says so', () => {
    expect(leadSyncOut(leadSync())).toMatchObject({ syncId: ID, integrationId: OTHER_ID, error: null, completedAt: null, skippedLeads: [] });
    const failed = leadSyncOut(
      leadSync({
        status: 'failed',
        errorCode: 'token_expired',
        errorMessage: 'expired',
        skippedLeads: [{ leadId: 'l1', reason: 'no phone' }],
        completedAt: AT,
      }),
    );
    expect(failed).toMatchObject({
      error: { code: 'token_expired', message: 'expired' },
      skippedLeads: [{ leadId: 'l1', reason: 'no phone' }],
      completedAt: AT,
    });
    expect(leadSyncStartedOut(leadSync())).toEqual({ syncId: ID, status: 'processing', estimatedCount: 3, alreadyRunning: false });
    expect(leadSyncStartedOut(leadSync({ started: false })).alreadyRunning).toBe(true);
  });

  it('scoringRuleOut: a rule for any tag or status has value null', () => {
    expect(scoringRuleOut(scoringRule()).value).toBeNull();
    expect(scoringRuleOut(scoringRule({ value: 'vip' })).value).toBe('vip');
  });

  it('reportOut: a gateway download path, absent values null, filters parsed ([] when none)', () => {
    expect(reportOut(report())).toEqual({
      id: ID,
      name: 'Q1',
      status: 'generating',
      createdAt: AT,
      downloadUrl: `/api/v1/analytics/custom/${ID}/download`,
      completedAt: null,
      error: null,
      rowCount: null,
      metrics: ['contacts'],
      dimensions: [],
      dateFrom: AT,
      dateTo: AT,
      filters: [],
      createdBy: null,
    });
  });

  it('teamPerformanceOut and responseTimeOut: rates of nothing are 0 beside a sample of 0', () => {
    expect(teamPerformanceOut(teamPerformance())).toEqual({
      period: { from: AT, to: AT },
      team: [
        {
          userId: ID,
          name: 'Ann',
          contactsAssigned: 0,
          messagesReplied: 0,
          averageResponseTime: 0,
          conversionRate: 0,
          revenueGenerated: 0,
          responses: 0,
        },
      ],
      teamTotal: { contactsAssigned: 0, messagesReplied: 0, conversionRate: 0, revenueGenerated: 0 },
    });
    expect(() => teamPerformanceOut({ ...teamPerformance(), teamTotal: null })).toThrow('crm TeamPerformance: teamTotal is missing from the answer');
    const r = responseTimeOut({ period: null, slaMinutes: 60, responses: 0, firstResponses: 0, resolutions: 0, businessHours: true });
    expect(r).toEqual({
      period: null,
      averageFirstResponseTime: 0,
      averageResolutionTime: 0,
      medianResponseTime: 0,
      percentile95: 0,
      percentile99: 0,
      onTimeRate: 0,
      slaMinutes: 60,
      responses: 0,
      firstResponses: 0,
      resolutions: 0,
      businessHours: true,
    });
  });
});
