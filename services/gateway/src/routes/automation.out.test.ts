import type { automation } from '@crm/proto-types';
import {
  campaignBriefOut,
  campaignCreatedOut,
  campaignOut,
  notificationOut,
  recipientOut,
  ruleCreatedOut,
  ruleOut,
  runOut,
  templateCreatedOut,
  templateOut,
} from './automation.out';
import { channelOut, suppressionOut } from './email.out';
import { action, campaign, emailChannel, recipient, rule, run, template } from '../test-support/automation-fixtures';
import { AT, ID, OTHER_ID } from '../test-support/crm-fixtures';

describe('automation mappers', () => {
  it('ruleOut: condition values as JSON values, no description null, keywords only on keyword triggers', () => {
    expect(ruleOut(rule())).toEqual({
      id: ID,
      name: 'Welcome',
      description: null,
      type: 'event',
      trigger: { type: 'contact_created', conditions: [{ field: 'source', operator: 'equals', value: 'api' }] },
      actions: [{ type: 'add_tag', tag: 'new' }],
      status: 'draft',
      createdAt: AT,
      updatedAt: AT,
      runCount: 0,
      lastRunAt: null,
    });
    const kw = ruleOut(rule({ description: 'hi', lastRunAt: AT, trigger: { type: 'keyword', conditions: [], keywords: ['price'] } }));
    expect(kw).toMatchObject({ description: 'hi', lastRunAt: AT, trigger: { type: 'keyword', conditions: [], keywords: ['price'] } });
    expect(ruleCreatedOut(rule({ secret: 'whsec_x' }))).toEqual({ id: ID, name: 'Welcome', status: 'draft', createdAt: AT, secret: 'whsec_x' });
    // The lists and map only if and http_request steps have are left out of other actions.
    expect(ruleOut(rule()).actions).toEqual([{ type: 'add_tag', tag: 'new' }]);
  });

  it('ruleOut: set_priority’s "" (a cleared priority over gRPC) reads null, a priority as written', () => {
    const actions = [action({ type: 'set_priority', priority: '' }), action({ type: 'set_priority', priority: 'urgent' })];
    expect(ruleOut(rule({ actions })).actions).toEqual([
      { type: 'set_priority', priority: null },
      { type: 'set_priority', priority: 'urgent' },
    ]);
  });

  it('ruleOut: an if step reads back with its conditions as JSON values and its branches', () => {
    const step = action({ type: 'send_message', template: 'hi' });
    const actions: automation.Action__Output[] = [
      {
        type: 'if',
        conditions: [{ field: 'steps.0.status', operator: 'equals', valueJson: '200' }],
        then: [step],
        else: [],
        headers: {},
      },
      { type: 'http_request', url: 'https://example.com/x', method: 'POST', headers: { 'x-a': 'b' }, conditions: [], then: [], else: [] },
    ];
    expect(ruleOut(rule({ actions })).actions).toEqual([
      {
        type: 'if',
        conditions: [{ field: 'steps.0.status', operator: 'equals', value: 200 }],
        then: [{ type: 'send_message', template: 'hi' }],
        else: [],
      },
      { type: 'http_request', url: 'https://example.com/x', method: 'POST', headers: { 'x-a': 'b' } },
    ]);
  });

  it('runOut: no contact, conversation, error, resume or finish is null; steps keep their path', () => {
    expect(runOut(run())).toEqual({
      id: ID,
      ruleId: OTHER_ID,
      trigger: 'contact_created',
      eventId: 'e1',
      eventType: 'contact.created',
      contactId: null,
      conversationId: null,
      status: 'running',
      steps: [],
      startedAt: AT,
      actionsDone: 0,
      totalActions: 1,
      error: null,
      attempts: 1,
      resumeAt: null,
      createdAt: AT,
      updatedAt: AT,
      finishedAt: null,
    });
    expect(runOut(run({ contactId: ID, error: 'boom', finishedAt: AT }))).toMatchObject({ contactId: ID, error: 'boom', finishedAt: AT });
    const steps = [
      { path: 'actions.0', type: 'if', status: 'succeeded', startedAt: AT, finishedAt: AT, error: '', branch: 'else' },
      { path: 'actions.0.else.0', type: 'wait', status: 'waiting', startedAt: AT, error: '', branch: '' },
    ];
    expect(runOut(run({ steps })).steps).toEqual([
      { path: 'actions.0', type: 'if', status: 'succeeded', branch: 'else', startedAt: AT, finishedAt: AT, error: null },
      { path: 'actions.0.else.0', type: 'wait', status: 'waiting', startedAt: AT, finishedAt: null, error: null },
    ]);
  });

  it('templateOut: no category is null', () => {
    expect(templateOut(template())).toEqual({
      id: ID,
      name: 'Hello',
      content: 'Hi {{name}}',
      category: null,
      variables: ['name'],
      createdAt: AT,
      updatedAt: AT,
    });
    expect(templateOut(template({ category: 'greeting' })).category).toBe('greeting');
    expect(templateCreatedOut(template())).toEqual({ id: ID, name: 'Hello', createdAt: AT });
  });

  it('campaignOut: variables as an object ({} when none), absent text and times null', () => {
    const out = campaignOut(campaign());
    expect(out).toMatchObject({
      description: null,
      subject: null,
      schedule: null,
      variables: {},
      lastError: null,
      activatedAt: null,
      completedAt: null,
      cancelledAt: null,
    });
    expect(Object.values(out)).not.toContain('');
    const set = campaignOut(
      campaign({ description: 'd', subject: 'Hi', schedule: AT, variablesJson: '{"code":"X1"}', lastError: 'smtp down', activatedAt: AT }),
    );
    expect(set).toMatchObject({ description: 'd', subject: 'Hi', schedule: AT, variables: { code: 'X1' }, lastError: 'smtp down', activatedAt: AT });
    expect(campaignBriefOut(campaign())).toEqual({
      id: ID,
      name: 'Spring',
      type: 'broadcast',
      status: 'draft',
      contactCount: 0,
      sentCount: 0,
      openRate: 0,
      createdAt: AT,
    });
    expect(campaignCreatedOut(campaign())).toEqual({ id: ID, name: 'Spring', status: 'draft', createdAt: AT });
  });

  it('recipientOut: a missing phone, email, error, conversation, message and times are null', () => {
    expect(recipientOut(recipient())).toEqual({
      contactId: OTHER_ID,
      name: 'Ann',
      phone: null,
      email: null,
      status: 'pending',
      error: null,
      attempts: 0,
      conversationId: null,
      messageId: null,
      sentAt: null,
      repliedAt: null,
      nextAttemptAt: null,
      updatedAt: AT,
      seenAt: null,
    });
    expect(recipientOut(recipient({ phone: '+84912345678', email: 'ann@example.com', sentAt: AT }))).toMatchObject({
      phone: '+84912345678',
      email: 'ann@example.com',
      sentAt: AT,
    });
  });

  it('notificationOut: no resource is null', () => {
    const n = { id: ID, type: 'assignment', title: 'T', message: 'M', resourceId: '', read: false, createdAt: AT };
    expect(notificationOut(n)).toEqual({ ...n, resourceId: null });
    expect(notificationOut({ ...n, resourceId: OTHER_ID }).resourceId).toBe(OTHER_ID);
  });

  it('channelOut: the organization’s own server shows its settings, never the password; otherwise nulls', () => {
    expect(channelOut(emailChannel())).toEqual({
      source: 'organization',
      configured: true,
      host: 'smtp.example.com',
      port: 587,
      secure: false,
      user: 'mailer',
      passwordSet: true,
      fromAddress: 'crm@example.com',
      fromName: 'CRM',
      updatedAt: AT,
    });
    expect(channelOut(emailChannel({ source: 'none', passwordSet: false, updatedAt: undefined }))).toEqual({
      source: 'none',
      configured: false,
      host: null,
      port: null,
      secure: null,
      user: null,
      passwordSet: false,
      fromAddress: null,
      fromName: null,
      updatedAt: null,
    });
  });

  it('suppressionOut: no campaign is null', () => {
    const s = { email: 'ann@example.com', reason: 'unsubscribed', campaignId: '', createdAt: AT };
    expect(suppressionOut(s)).toEqual({ ...s, campaignId: null });
    expect(suppressionOut({ ...s, campaignId: ID }).campaignId).toBe(ID);
  });
});
