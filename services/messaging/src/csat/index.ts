/**
 * CSAT (issue #29 item 6): the question when a conversation closes, the contact's rating and comment, the analytics.
 * The rest of messaging uses this face.
 */
export { askOnClose as askCsatOnClose, questionSent as csatQuestionSent, takeReply as takeCsatReply, analytics as csatAnalytics } from './survey';
export { parseRating } from './rating';
