/**
 * The org's inbox settings (agent visibility, auto-close, the out-of-hours reply, CSAT): GET/PUT /settings/inbox,
 * and what the rest of messaging reads of them. The rest of messaging uses this face.
 */
export { get as getInboxSettings, update as updateInboxSettings } from './settings';
export { find as inboxSettingsOf, csatQuestion, outOfHoursMessages, type InboxSettingsRow } from './repo';
