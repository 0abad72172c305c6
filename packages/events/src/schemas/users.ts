import { z } from 'zod';
import { Id } from './common';
import { defineEvent } from './define';

/** Identity's events about users (issue #29 items 4 and 5): messaging's assignment repairs itself from them. */

/** A user's availability as others should treat it. */
export const AVAILABILITY_STATUSES = ['online', 'away', 'offline'] as const;
export type AvailabilityStatus = (typeof AVAILABILITY_STATUSES)[number];

export const userAvailabilityChanged = defineEvent({
  type: 'user.availability_changed',
  version: 1,
  producers: ['identity'],
  description:
    "Internal: a user's effective availability changed; data: userId, status (online, away, offline: offline also when no socket of theirs was connected for 5 minutes, whatever they chose), previousStatus, chosenStatus (what they set).",
  data: z.object({
    userId: Id,
    status: z.enum(AVAILABILITY_STATUSES),
    previousStatus: z.enum(AVAILABILITY_STATUSES),
    chosenStatus: z.enum(AVAILABILITY_STATUSES),
  }),
});

export const userDeactivated = defineEvent({
  type: 'user.deactivated',
  version: 1,
  producers: ['identity'],
  description: 'Internal: a user was deactivated (they can no longer sign in or be assigned); data: userId.',
  data: z.object({ userId: Id }),
});

export const userEvents = [userAvailabilityChanged, userDeactivated];
