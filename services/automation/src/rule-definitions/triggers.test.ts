import { ActionInput, parseDuration, validateActions, validateTrigger } from './definition';
import { conditionsHold, contactIdOf, Facts, holds, keywordMatches, TriggerDef, triggersOfEvent } from './triggers';

const trigger = (t: Partial<TriggerDef>): TriggerDef => ({ type: 'contact_created', conditions: [], keywords: [], ...t });

describe('conditions', () => {
  it('equals / not_equals: case-insensitive text, numbers, booleans, membership for arrays; missing fields never equal', () => {
    expect(holds({ field: 'f', operator: 'equals', value: 'ChatNet' }, 'chatnet')).toBe(true);
    expect(holds({ field: 'f', operator: 'equals', value: 50 }, '50')).toBe(true);
    expect(holds({ field: 'f', operator: 'equals', value: '50' }, 50)).toBe(true);
    expect(holds({ field: 'f', operator: 'equals', value: true }, true)).toBe(true);
    expect(holds({ field: 'f', operator: 'equals', value: 'vip' }, ['new', 'VIP'])).toBe(true);
    expect(holds({ field: 'f', operator: 'equals', value: 'x' }, undefined)).toBe(false);
    expect(holds({ field: 'f', operator: 'not_equals', value: 'x' }, undefined)).toBe(true);
    expect(holds({ field: 'f', operator: 'not_equals', value: 'lead' }, 'Lead')).toBe(false);
  });

  it('gte / lte compare numbers and ISO dates, and nothing else', () => {
    expect(holds({ field: 'f', operator: 'gte', value: 50 }, 50)).toBe(true);
    expect(holds({ field: 'f', operator: 'gte', value: 50 }, 49)).toBe(false);
    expect(holds({ field: 'f', operator: 'lte', value: '10' }, 9.5)).toBe(true);
    expect(holds({ field: 'f', operator: 'gte', value: '2030-01-01' }, '2030-01-02T00:00:00.000Z')).toBe(true);
    expect(holds({ field: 'f', operator: 'lte', value: '2030-01-01' }, '2030-01-02T00:00:00.000Z')).toBe(false);
    expect(holds({ field: 'f', operator: 'gte', value: 1 }, 'abc')).toBe(false);
    expect(holds({ field: 'f', operator: 'gte', value: 1 }, undefined)).toBe(false);
  });

  it('contains: substring of text, element of an array; in: one of the values', () => {
    expect(holds({ field: 'f', operator: 'contains', value: 'giá' }, 'Cho xin giá')).toBe(true);
    expect(holds({ field: 'f', operator: 'contains', value: 'vip' }, ['VIP', 'x'])).toBe(true);
    expect(holds({ field: 'f', operator: 'contains', value: 'vip' }, 5)).toBe(false);
    expect(holds({ field: 'f', operator: 'in', value: ['chatnet', 'website'] }, 'Website')).toBe(true);
    expect(holds({ field: 'f', operator: 'in', value: ['a', 'b'] }, ['c', 'b'])).toBe(true);
    expect(holds({ field: 'f', operator: 'in', value: ['a', 'b'] }, 'c')).toBe(false);
  });

  it('fields are read bare or prefixed from the event record, contact.* from the contact; all must hold', () => {
    const facts: Facts = { subject: { content: 'hello', contentType: 'text' }, contact: { tags: ['vip'] } };
    const t = trigger({
      type: 'message_received',
      conditions: [
        { field: 'message.content', operator: 'contains', value: 'hell' },
        { field: 'contentType', operator: 'equals', value: 'text' },
        { field: 'contact.tags', operator: 'contains', value: 'vip' },
      ],
    });
    expect(conditionsHold(t, facts)).toBe(true);
    expect(conditionsHold({ ...t, conditions: [...t.conditions, { field: 'threadType', operator: 'equals', value: 'group' }] }, facts)).toBe(false);
  });

  it('conversation_csat_received starts from conversation.csat_received; its rating is a condition (issue #29)', () => {
    expect(triggersOfEvent('conversation.csat_received')).toEqual(['conversation_csat_received']);
    const data = {
      conversationId: 'c1',
      contactId: 'k1',
      chatnetAccountId: 'a1',
      assigneeId: null,
      rating: 2,
      comment: 'slow',
      respondedAt: '2031-01-01T00:00:00.000Z',
    };
    expect(contactIdOf('conversation.csat_received', data)).toBe('k1');
    const low = trigger({ type: 'conversation_csat_received', conditions: [{ field: 'csat.rating', operator: 'lte', value: 2 }] });
    expect(conditionsHold(low, { subject: data })).toBe(true);
    expect(conditionsHold(low, { subject: { ...data, rating: 5 } })).toBe(false);
    expect(conditionsHold({ ...low, conditions: [{ field: 'comment', operator: 'contains', value: 'slow' }] }, { subject: data })).toBe(true);
  });

  it('keyword triggers need a keyword in the content; other triggers ignore keywords', () => {
    const t = trigger({ type: 'keyword', keywords: ['bao gia', 'price'] });
    expect(keywordMatches(t, { subject: { content: 'What is the PRICE?' } })).toBe(true);
    expect(keywordMatches(t, { subject: { content: 'priceless' } })).toBe(false);
    expect(keywordMatches(t, { subject: {} })).toBe(false);
    expect(keywordMatches(trigger({}), { subject: {} })).toBe(true);
  });
});

describe('definitions', () => {
  const err = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return (e as { details?: Array<{ field: string }> }).details?.[0]?.field;
    }
    return undefined;
  };

  it('durations: 30s, 10m, 2h, 1d or seconds', () => {
    expect([parseDuration('30s'), parseDuration('10m'), parseDuration('2h'), parseDuration('1d'), parseDuration('90'), parseDuration('1 H')]).toEqual(
      [30, 600, 7200, 86_400, 90, 3600],
    );
    expect(parseDuration('soon')).toBeUndefined();
    expect(parseDuration('1.5h')).toBeUndefined();
  });

  it('validation names the field the client wrote', () => {
    expect(err(() => validateTrigger({ type: 'keyword', keywords: ['ok', '!!!'] }))).toBe('trigger.keywords.1');
    expect(
      err(() => validateTrigger({ type: 'appointment_created', conditions: [{ field: 'contact.tags', operator: 'in', valueJson: '[]' }] })),
    ).toBe('trigger.conditions.0.value');
    expect(
      err(() => validateTrigger({ type: 'contact_created', conditions: [{ field: 'contact.chatnetUid', operator: 'equals', valueJson: '"x"' }] })),
    ).toBe('trigger.conditions.0.field');
    const a = (x: ActionInput, i = 0) =>
      err(() => validateActions([...Array<ActionInput>(i).fill({ type: 'assign_round_robin' }), x], 'contact_created'));
    expect(a({ type: 'send_message', template: 'x', templateId: '6f1c1d3e-4b7a-4c2e-9a51-3f0e8d2b7c10' }, 3)).toBe('actions.3.template');
    expect(a({ type: 'send_notification', message: 'x', notificationType: 'Bad Type' })).toBe('actions.0.notificationType');
    expect(a({ type: 'wait', duration: '0s' })).toBe('actions.0.duration');
  });

  it('a template that is a UUID is a template reference; other text is inline', () => {
    expect(validateActions([{ type: 'send_message', template: '6F1C1D3E-4B7A-4C2E-9A51-3F0E8D2B7C10' }], 'contact_created')[0]).toEqual({
      type: 'send_message',
      template: '6f1c1d3e-4b7a-4c2e-9a51-3f0e8d2b7c10',
    });
    expect(validateActions([{ type: 'send_message', template: '  Hi {{name}} ' }], 'contact_created')[0]).toEqual({
      type: 'send_message',
      template: 'Hi {{name}}',
    });
  });
});
