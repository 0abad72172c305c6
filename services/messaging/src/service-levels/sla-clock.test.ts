import { applySlaNews, slaDueTimes, type SlaAnchors, type SlaWindows } from './sla-clock';
import { ALWAYS_OPEN, parseBusinessHours } from './schedule';

const at = (iso: string) => new Date(iso);
const MINUTE = 60_000;
const policy: SlaWindows = { firstResponseMinutes: 15, nextResponseMinutes: 30, resolutionMinutes: 240, businessHoursOnly: false };
const none: SlaAnchors = { openedAt: null, waitingSince: null, replied: false, breached: [] };
// Monday to Friday 08:00-17:00 UTC; 2031-01-10 is a Friday.
const weekdays = parseBusinessHours({ timezone: 'UTC', days: [1, 2, 3, 4, 5].map((day) => ({ day, open: '08:00', close: '17:00' })) });

describe('SLA clock: the windows of a conversation', () => {
  it('first response and resolution from the first inbound message; due_soon from the last 20% of the nearest window', () => {
    const { anchors, newCycle } = applySlaNews(none, { kind: 'inbound', at: at('2031-01-06T10:00:00Z') });
    expect(newCycle).toBe(true);
    expect(slaDueTimes(policy, ALWAYS_OPEN, MINUTE, anchors)).toEqual({
      firstResponseDueAt: at('2031-01-06T10:15:00Z'),
      nextResponseDueAt: null,
      resolutionDueAt: at('2031-01-06T14:00:00Z'),
      dueAt: at('2031-01-06T10:15:00Z'),
      warnAt: at('2031-01-06T10:12:00Z'),
    });
    // A second message while still waiting moves nothing.
    expect(applySlaNews(anchors, { kind: 'inbound', at: at('2031-01-06T10:05:00Z') }).anchors).toBe(anchors);
    // Nor does one written before the cycle began (its event late), even when nobody waits.
    const answered = { ...anchors, waitingSince: null, replied: true };
    expect(applySlaNews(answered, { kind: 'inbound', at: at('2031-01-06T09:59:00Z') }).anchors).toBe(answered);
  });

  it('our reply meets the first response; the next inbound message starts a next-response window; closing stops every clock', () => {
    let a = applySlaNews(none, { kind: 'inbound', at: at('2031-01-06T10:00:00Z') }).anchors;
    a = applySlaNews(a, { kind: 'reply', at: at('2031-01-06T10:05:00Z') }).anchors;
    expect(slaDueTimes(policy, ALWAYS_OPEN, MINUTE, a)).toEqual(
      expect.objectContaining({ firstResponseDueAt: null, nextResponseDueAt: null, dueAt: at('2031-01-06T14:00:00Z') }),
    );
    a = applySlaNews(a, { kind: 'inbound', at: at('2031-01-06T11:00:00Z') }).anchors;
    expect(slaDueTimes(policy, ALWAYS_OPEN, MINUTE, a).nextResponseDueAt).toEqual(at('2031-01-06T11:30:00Z'));
    // A message written before the wait began answers nothing.
    expect(applySlaNews(a, { kind: 'reply', at: at('2031-01-06T10:59:00Z') }).anchors).toBe(a);
    const closed = applySlaNews(a, { kind: 'closed', at: at('2031-01-06T12:00:00Z') }).anchors;
    expect(slaDueTimes(policy, ALWAYS_OPEN, MINUTE, closed)).toEqual({
      firstResponseDueAt: null,
      nextResponseDueAt: null,
      resolutionDueAt: null,
      dueAt: null,
      warnAt: null,
    });
    // The next inbound message after closing starts a new cycle with a first-response window again.
    const again = applySlaNews(closed, { kind: 'inbound', at: at('2031-01-07T09:00:00Z') });
    expect(again.newCycle).toBe(true);
    expect(slaDueTimes(policy, ALWAYS_OPEN, MINUTE, again.anchors).firstResponseDueAt).toEqual(at('2031-01-07T09:15:00Z'));
    // Reopened by the contact's message whose event comes after the reopening's: the wait starts at the reopening.
    const reopenedFirst = applySlaNews(closed, { kind: 'reopened', at: at('2031-01-07T09:00:01Z') }).anchors;
    const late = applySlaNews(reopenedFirst, { kind: 'inbound', at: at('2031-01-07T09:00:00Z') }).anchors;
    expect(slaDueTimes(policy, ALWAYS_OPEN, MINUTE, late).firstResponseDueAt).toEqual(at('2031-01-07T09:15:01Z'));
    // A reopening starts the resolution clock; the contact's next message its first response.
    const reopened = applySlaNews(closed, { kind: 'reopened', at: at('2031-01-07T09:00:00Z') });
    expect(reopened.newCycle).toBe(true);
    expect(slaDueTimes(policy, ALWAYS_OPEN, MINUTE, reopened.anchors)).toEqual(
      expect.objectContaining({ firstResponseDueAt: null, resolutionDueAt: at('2031-01-07T13:00:00Z') }),
    );
  });

  it('a breached window is due no more: the timer moves to the next one', () => {
    const a = applySlaNews(none, { kind: 'inbound', at: at('2031-01-06T10:00:00Z') }).anchors;
    expect(slaDueTimes(policy, ALWAYS_OPEN, MINUTE, { ...a, breached: ['first_response'] }).dueAt).toEqual(at('2031-01-06T14:00:00Z'));
  });

  it('businessHoursOnly: the windows skip closed hours (Friday 16:55 + 15 minutes is Monday 08:10)', () => {
    const a = applySlaNews(none, { kind: 'inbound', at: at('2031-01-10T16:55:00Z') }).anchors;
    const due = slaDueTimes({ ...policy, businessHoursOnly: true }, weekdays, MINUTE, a);
    expect(due.firstResponseDueAt).toEqual(at('2031-01-13T08:10:00Z'));
    // 80% of 15 minutes: 5 on Friday, 7 on Monday.
    expect(due.warnAt).toEqual(at('2031-01-13T08:07:00Z'));
    // Hours that never open: no due time at all.
    expect(slaDueTimes({ ...policy, businessHoursOnly: true }, parseBusinessHours({ timezone: 'UTC', days: [] }), MINUTE, a).dueAt).toBeNull();
  });

  it('a service-level minute of 1 s (SERVICE_LEVEL_MINUTE_MS, tests) shortens every window', () => {
    const a = applySlaNews(none, { kind: 'inbound', at: at('2031-01-06T10:00:00Z') }).anchors;
    expect(slaDueTimes(policy, ALWAYS_OPEN, 1000, a).firstResponseDueAt).toEqual(at('2031-01-06T10:00:15Z'));
    expect(slaDueTimes({ ...policy, businessHoursOnly: true }, weekdays, 1000, a).firstResponseDueAt).toEqual(at('2031-01-06T10:00:15Z'));
  });
});
