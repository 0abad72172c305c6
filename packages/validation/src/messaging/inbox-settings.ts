/**
 * The org's inbox automation settings (issue #29 items 3 and 6): auto-close after idle minutes, the messages sent
 * automatically (on auto-close, out of hours) and the CSAT question.
 */

/** Longest idle time before auto-close: 30 days. */
export const AUTO_CLOSE_MAX_MINUTES = 43_200;
export const AUTO_CLOSE_MINUTES_MESSAGE = `must be a whole number of minutes from 1 to ${AUTO_CLOSE_MAX_MINUTES}, or null`;
/** Most characters of a message the inbox sends by itself. */
export const AUTO_MESSAGE_MAX = 2_000;
/** The CSAT question when none was set: it names the answers the rating parser understands. */
export const DEFAULT_CSAT_MESSAGE = 'How would you rate our help? Reply with a number from 1 (bad) to 5 (great), or with ⭐ to ⭐⭐⭐⭐⭐.';
/** A CSAT reply counts when it arrives within this long of the question. */
export const CSAT_WINDOW_HOURS = 24;
