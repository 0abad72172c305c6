/**
 * crm's contract rules, stated once: the enums, limits and value rules of contacts, appointments, notes, custom
 * statuses, customer lists and custom fields. The gateway builds its zod schemas from them; crm applies them to
 * what reaches its storage by any other way. Rules that need an org's data (its statuses, users, custom field
 * definitions, duplicate phones) or crm's config (the phone's default country) stay in crm.
 */
export * from './appointments';
export * from './contact-fields';
export * from './contact-statuses';
export * from './contacts';
export * from './customer-lists';
export * from './messages';
export * from './notes';
export * from './ordering';
