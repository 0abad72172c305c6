/**
 * Every tag an operation can carry, with the description the documents give it. An area names its tag from here
 * (registry.ts), so a tag without a description does not compile; a document lists the tags its operations use.
 */
export const TAGS = {
  Health: 'Probes for load balancers and orchestrators: the process is up (/healthz), it can serve (/readyz). No credential.',
  Documentation: 'The OpenAPI documents themselves, readable without a credential.',
  'Sign-in': 'First-run setup, sign-up, sign-in, token refresh and accepting an invitation. No credential: these issue one.',
  Profile: 'The signed-in user: profile, notification preferences, availability, and signing out.',
  'Users and teams': 'The organization’s users (inviting, changing roles, deactivating) and its teams.',
  'API key':
    'Keys for the public API: the organization’s own key (every scope; its mask, and generating a new one, shown once), and named keys with scopes, optionally bound to a user.',
  'Audit log': 'Who did what in the organization (admins and owners).',
  Contacts: 'Contacts with their notes and friends records, bulk changes, merging (and undoing a merge), import and export as CSV.',
  'Contact statuses': 'The organization’s custom contact statuses.',
  Appointments: 'Appointments with contacts: scheduling, rescheduling, completing and cancelling.',
  'Customer lists': 'Saved criteria over contacts, evaluated live; campaigns send to their members.',
  Tasks: 'To-dos for the team, optionally on a contact or conversation, with an assignee and a due time.',
  'Custom fields': 'Definitions of the organization’s custom contact fields (the values are on each contact).',
  'Lead scoring': 'The organization’s scoring model and rules, and each contact’s score with how it was reached.',
  Conversations: 'The shared inbox: listing, counting, assigning, prioritizing, snoozing, closing, archiving and starting conversations.',
  Messages: 'Sending, searching, flagging, recalling and reacting to messages.',
  'Scheduled messages': 'Messages set to be sent later: reading, rescheduling and cancelling them before they go.',
  Macros: 'Named sets of actions an agent runs on a conversation in one step: the organization’s shared ones and personal ones.',
  'Conversation notes': 'Private notes on a conversation, for the team only, never sent to the contact.',
  'Inbox settings': 'How the organization’s inbox works: agent visibility, auto-close, the out-of-hours reply and CSAT.',
  'Chat folders': 'Folders that group conversations.',
  'Chat presets': 'Saved replies agents insert into messages.',
  Attachments: 'Files sent in conversations, uploaded and downloaded as streams.',
  'Chat-network accounts':
    'The organization’s chat-network accounts: connecting by QR code, live state, proxy, who gets new conversations, looking people up, friend requests.',
  'Sandbox chat network': 'Outside production with CHATNET_DRIVER=sandbox: play the chat network and its customers, for tests and demos.',
  'Business hours': 'When the organization, or one account, is open: opening ranges per weekday in a time zone, and holidays.',
  'SLA policies': 'Response-time targets, who is told of a breach, and which policy each account follows.',
  Analytics: 'Conversion funnel, team performance, response times, CSAT and SLA compliance (team leads and above).',
  Reports: 'Custom reports (metrics by dimensions over a date range), generated in the background and downloaded as CSV.',
  'Saved views': 'Saved filters of the conversations or contacts list, applied with `viewId`.',
  'Automation rules': 'Rules that act when something happens (a trigger, conditions, actions), with their run log.',
  'Message templates': 'Reusable message texts with {{placeholders}}, used by rules and campaigns.',
  Campaigns: 'Messages sent to a customer list over time: scheduling, pausing, cancelling, and how each recipient went.',
  Notifications: 'The signed-in user’s in-app notifications.',
  'Appointment reminders': 'How long before an appointment its reminder is sent.',
  'Email campaigns': 'The email channel of campaigns: the organization’s SMTP server, a test send, and the addresses that unsubscribed.',
  'Email links': 'The unsubscribe and open-tracking links every campaign email carries. No credential: the token in the link names the recipient.',
  Webhooks:
    'Webhook endpoints, their signing secrets, test sends, delivery logs, replays of past events, and the event feed (owners and admins). The events sent are under `webhooks`.',
  'AI assistant': 'AI providers and their keys, the assistant’s settings and daily quota, reply drafts, summaries and sentiment.',
  Integrations: 'The social network’s pages and lead forms: connecting pages and syncing their leads into contacts.',
  'Sandbox social network': 'Outside production: play the social network (pages, lead forms, leads, outages), for tests and demos.',
  'Public: contacts': 'Contacts for integrators: list, read, create and update.',
  'Public: appointments': 'Appointments for integrators: list and create.',
  'Public: conversations': 'Conversations and messages for integrators: read them, send a message, start a conversation.',
  'Public: key': 'Check an API key: the organization it acts for.',
  'Public: events':
    'The event feed: every public event (the webhook catalogue) after a cursor, oldest first, with long-polling; the same events, ids and data as the webhooks.',
} as const satisfies Record<string, string>;

export type Tag = keyof typeof TAGS;
