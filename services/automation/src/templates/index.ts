/**
 * Message templates: the API (list, get, create, update, delete; a template a rule or a draft campaign still uses is
 * not deleted, asked through TemplateUsers so that this module imports neither) and the rows rules and campaigns
 * render from.
 */
export * as templates from './templates';
export type { TemplateUsers } from './templates';
export { existingTemplateIds, getTemplate } from './templates.repo';
