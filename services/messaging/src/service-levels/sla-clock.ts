import type { SLA_TARGETS } from '@crm/events';
import { addOpenMinutes, type BusinessHours } from './schedule';

export type SlaTarget = (typeof SLA_TARGETS)[number];

/**
 * A conversation's SLA clock as pure arithmetic (issue #29 item 2): what happened (a cycle opened, the contact is
 * waiting since, we answered before) → the pending due times. No I/O: the consumer and the timer hand in the row.
 *
 * - first response: from the first inbound message of a cycle until our first reply;
 * - next response: each later inbound message after our reply starts a new window until we reply again;
 * - resolution: from the cycle's opening until the conversation closes.
 * A cycle opens with the first inbound message (or a reopening) and ends when the conversation closes; closing stops
 * every clock, and the next inbound message (or reopening) starts a new cycle, as Chatwoot does.
 */
export interface SlaWindows {
  firstResponseMinutes: number;
  nextResponseMinutes: number | null;
  resolutionMinutes: number | null;
  businessHoursOnly: boolean;
}

export interface SlaAnchors {
  openedAt: Date | null;
  waitingSince: Date | null;
  replied: boolean;
  /** Windows of the current cycle already breached: never due again. */
  breached: readonly string[];
}

export interface SlaDue {
  firstResponseDueAt: Date | null;
  nextResponseDueAt: Date | null;
  resolutionDueAt: Date | null;
  /** The nearest due time not yet breached (the timer's), and when its last 20% begins. */
  dueAt: Date | null;
  warnAt: Date | null;
}

/** `due_soon` is the last 20% of a window. */
export const DUE_SOON_SHARE = 0.2;

/**
 * One window of `minutes` from `start`: minutes of open time when businessHoursOnly (null when the hours never open),
 * a service-level minute being `minuteMs` long (SERVICE_LEVEL_MINUTE_MS; tests shorten it).
 */
function window(w: SlaWindows, hours: BusinessHours, minuteMs: number, start: Date, minutes: number): { due: Date; warn: Date } | null {
  const scaled = (minutes * minuteMs) / 60_000;
  if (!w.businessHoursOnly) {
    return { due: new Date(start.getTime() + scaled * 60_000), warn: new Date(start.getTime() + scaled * (1 - DUE_SOON_SHARE) * 60_000) };
  }
  const due = addOpenMinutes(hours, start, scaled);
  const warn = addOpenMinutes(hours, start, scaled * (1 - DUE_SOON_SHARE));
  return due && warn ? { due, warn } : null;
}

const earliest = (dates: Array<Date | null>): Date | null =>
  dates.reduce<Date | null>((min, d) => (d && (!min || d.getTime() < min.getTime()) ? d : min), null);

/** The due times of the windows running now. */
export function slaDueTimes(w: SlaWindows, hours: BusinessHours, minuteMs: number, a: SlaAnchors): SlaDue {
  const first = a.openedAt && a.waitingSince && !a.replied ? window(w, hours, minuteMs, a.waitingSince, w.firstResponseMinutes) : null;
  const next =
    a.openedAt && a.waitingSince && a.replied && w.nextResponseMinutes ? window(w, hours, minuteMs, a.waitingSince, w.nextResponseMinutes) : null;
  const resolution = a.openedAt && w.resolutionMinutes ? window(w, hours, minuteMs, a.openedAt, w.resolutionMinutes) : null;
  const pending = (
    [
      ['first_response', first],
      ['next_response', next],
      ['resolution', resolution],
    ] as Array<[SlaTarget, { due: Date; warn: Date } | null]>
  ).filter(([target, win]) => win && !a.breached.includes(target));
  return {
    firstResponseDueAt: first?.due ?? null,
    nextResponseDueAt: next?.due ?? null,
    resolutionDueAt: resolution?.due ?? null,
    dueAt: earliest(pending.map(([, win]) => win!.due)),
    warnAt: earliest(pending.map(([, win]) => win!.warn)),
  };
}

/** What a conversation's news does to its anchors. */
export type SlaNews = { kind: 'inbound'; at: Date } | { kind: 'reply'; at: Date } | { kind: 'closed'; at: Date } | { kind: 'reopened'; at: Date };

/** A new cycle: no wait yet, nothing breached. */
const cycle = (at: Date, waitingSince: Date | null): SlaAnchors => ({ openedAt: at, waitingSince, replied: false, breached: [] });

/**
 * The anchors after the news, and whether a new cycle began (its breach is forgotten). A message our side sent
 * answers only a wait that began before it; a reopening by the contact's own message starts one cycle, with the
 * contact waiting from its opening, whichever of the two events comes first.
 */
export function applySlaNews(a: SlaAnchors, news: SlaNews): { anchors: SlaAnchors; newCycle: boolean } {
  switch (news.kind) {
    case 'inbound':
      if (!a.openedAt) return { anchors: cycle(news.at, news.at), newCycle: true };
      if (a.waitingSince) return { anchors: a, newCycle: false };
      // Written before the cycle began and already answered: news arriving late (or from before a policy came).
      if (news.at.getTime() < a.openedAt.getTime() && a.replied) return { anchors: a, newCycle: false };
      // A wait starts no earlier than its cycle: the message that reopened a conversation may be stored (and its
      // event sent) just after the reopening.
      return {
        anchors: {
          ...a,
          waitingSince: new Date(Math.max(news.at.getTime(), a.openedAt.getTime())),
          breached: a.breached.filter((t) => t !== 'next_response'),
        },
        newCycle: false,
      };
    case 'reply':
      if (!a.openedAt || !a.waitingSince || news.at.getTime() < a.waitingSince.getTime()) return { anchors: a, newCycle: false };
      return {
        anchors: { ...a, waitingSince: null, replied: true, breached: a.breached.filter((t) => t === 'resolution') },
        newCycle: false,
      };
    case 'closed':
      return { anchors: { openedAt: null, waitingSince: null, replied: false, breached: [] }, newCycle: false };
    case 'reopened':
      return a.openedAt ? { anchors: a, newCycle: false } : { anchors: cycle(news.at, null), newCycle: true };
  }
}
