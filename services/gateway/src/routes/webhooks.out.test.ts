import { deliveryOut, testResultOut, webhookBriefOut, webhookCreatedOut, webhookOut } from './webhooks.out';
import { AT, ID, OTHER_ID } from '../test-support/crm-fixtures';
import { attempt, delivery, webhook } from '../test-support/webhooks-fixtures';

describe('webhook mappers', () => {
  it('webhookBriefOut and webhookOut: never a secret; not disabled is null', () => {
    const brief = { id: ID, url: 'https://hooks.example.com/x', events: ['contact.created'], active: true, createdAt: AT };
    expect(webhookBriefOut(webhook())).toEqual(brief);
    expect(webhookOut(webhook())).toEqual({ ...brief, updatedAt: AT, disabledAt: null, disabledReason: null });
    expect(webhookOut(webhook({ active: false, disabledAt: AT, disabledReason: 'gone' }))).toMatchObject({
      active: false,
      disabledAt: AT,
      disabledReason: 'gone',
    });
  });

  it('webhookCreatedOut shows a generated secret once, and no key when the caller chose it', () => {
    const w = { id: ID, url: 'https://hooks.example.com/x', events: ['contact.created'], active: true, createdAt: AT };
    expect(webhookCreatedOut({ ...w, secret: 'whsec_x' })).toEqual({ ...w, secret: 'whsec_x' });
    expect(webhookCreatedOut(w)).toEqual(w);
  });

  it('deliveryOut: unset values null, no response body null; attempts in order', () => {
    expect(deliveryOut(delivery())).toEqual({
      id: ID,
      webhookId: OTHER_ID,
      eventId: 'e1',
      eventType: 'contact.created',
      status: 'pending',
      attemptCount: 1,
      nextAttemptAt: AT,
      lastStatusCode: null,
      lastError: null,
      createdAt: AT,
      deliveredAt: null,
      attempts: [
        {
          attempt: 1,
          trigger: 'auto',
          startedAt: AT,
          durationMs: 12,
          statusCode: null,
          ok: false,
          error: 'ENOTFOUND',
          responseBody: null,
          responseBodyTruncated: false,
        },
      ],
      replay: false,
    });
    const ok = attempt({ attempt: 2, ok: true, statusCode: 200, error: undefined, responseBody: 'ok' });
    const done = deliveryOut(delivery({ status: 'succeeded', lastStatusCode: 200, deliveredAt: AT, attempts: [attempt(), ok] }));
    expect(done.attempts[1]).toMatchObject({ attempt: 2, statusCode: 200, error: null, responseBody: 'ok' });
    expect(done).toMatchObject({ lastStatusCode: 200, deliveredAt: AT });
  });

  it('testResultOut: no status code, error or body is null', () => {
    expect(testResultOut({ deliveryId: ID, eventId: 'e1', ok: false, durationMs: 5, responseBody: '', responseBodyTruncated: false })).toEqual({
      deliveryId: ID,
      eventId: 'e1',
      ok: false,
      statusCode: null,
      durationMs: 5,
      error: null,
      responseBody: null,
      responseBodyTruncated: false,
    });
  });
});
