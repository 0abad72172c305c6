export const CONVERSATION_STATUSES = ['active', 'pending', 'snoozed', 'closed', 'archived'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];
export const THREAD_TYPES = ['user', 'group'] as const;
/**
 * `priority` sorts urgent first, then high, medium, low, and conversations without a priority last; `slaDue` the
 * nearest pending SLA due time first, conversations without one last (issue #29).
 */
export const CONVERSATION_SORTS = ['lastMessage', 'createdAt', 'priority', 'slaDue'] as const;
/** A conversation's SLA status (issue #29): due_soon in the last 20% of a window, breached once a window was missed. */
export const SLA_STATUSES = ['ok', 'due_soon', 'breached'] as const;
export type SlaStatus = (typeof SLA_STATUSES)[number];
/** A conversation's priority, least to most pressing; none is null (issue #29). */
export const CONVERSATION_PRIORITIES = ['low', 'medium', 'high', 'urgent'] as const;
export type ConversationPriority = (typeof CONVERSATION_PRIORITIES)[number];
/** The list's `priority` filter: one priority, or `none` for conversations without one. */
export const PRIORITY_FILTERS = [...CONVERSATION_PRIORITIES, 'none'] as const;
export const PRIORITY_MESSAGE = `must be one of ${CONVERSATION_PRIORITIES.join(', ')}, or null`;
export const SORT_DIRECTIONS = ['asc', 'desc'] as const;
/** Whether agents see every conversation of the org or only theirs (and the unassigned ones of their accounts). */
export const AGENT_VISIBILITIES = ['all', 'assigned'] as const;

/** The `assigneeId` filter: a user id, or one of these words. */
export const ASSIGNEE_FILTER_WORDS = ['me', 'unassigned'] as const;
export const ASSIGNEE_FILTER_MESSAGE = 'must be a user id, me or unassigned';

/** Most characters of a search term (conversations' `search`, messages' `q`), and the fewest of `q`. */
export const SEARCH_TERM_MAX = 200;
export const SEARCH_QUERY_MIN = 2;
export const SEARCH_QUERY_TOO_SHORT = `must be at least ${SEARCH_QUERY_MIN} characters`;

export const BULK_ACTIONS = ['assign', 'status', 'folder', 'read', 'macro'] as const;
/** Most ids one bulk request may name. */
export const BULK_MAX_IDS = 1000;

// A snooze's wake-up time: only with status snoozed, and required with it.
export const SNOOZE_ONLY_WHEN_SNOOZED = 'is only for status snoozed';
export const SNOOZE_REQUIRED = 'is required for status snoozed';
export const SNOOZE_TIMESTAMP_MESSAGE = 'must be an ISO 8601 timestamp in years 0001-9999';

/** PUT /conversations/:id/messages/:messageId must change one flag at least. */
export const FLAGS_REQUIRED = 'send isRead and/or isReplied';
