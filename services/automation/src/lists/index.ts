/**
 * crm's customer lists as automation reads them, live: a list's name and count, and its members a page at a time.
 * Campaigns take them as recipients; a schedule trigger with a list runs its rule once per member.
 */
export { findList, isNotFound, type ListBrief, type Member, memberPage } from './lists';
