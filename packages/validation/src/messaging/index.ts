/**
 * messaging's contract rules, stated once: the enums, limits and value rules of conversations, messages, notes,
 * chat folders and presets. The gateway builds its zod schemas from them; messaging applies them to what other
 * callers send over gRPC. Rules that need messaging's data (an org's users, teams, folders, attachments, whether
 * a snooze lies ahead) or its search folding stay in messaging.
 */
export * from './conversations';
export * from './folders';
export * from './messages';
export * from './notes';
export * from './presets';
export * from './macros';
export * from './inbox-settings';
