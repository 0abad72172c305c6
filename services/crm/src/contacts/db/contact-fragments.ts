import { type Criteria, criteriaSql } from '../domain/list-criteria';

/**
 * SQL fragments naming the contacts table for statements other modules own (issue #30 item 3: only contacts/db names
 * the table). A report or a lead-score computation joins contacts to its own tables in one statement, which a
 * function returning rows cannot do without a round trip per step; these give such a statement the org's contacts as
 * a FROM item (a sub-select PostgreSQL flattens into the statement: the same plan, the same indexes, as naming the
 * table there) with the org filter built in, so no caller can forget it. The one write among them is lead_score, the
 * column lead scoring computes; every other change of a contact goes through ContactWriter.
 */

/** A parameter placeholder (`$1`): the only thing a fragment takes into its text besides whitelisted names. */
function placeholder(param: string): string {
  if (!/^\$\d+$/.test(param)) throw new Error(`Not a parameter placeholder: ${param}`);
  return param;
}

function alias(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Not an alias: ${name}`);
  return name;
}

/** The org whose id is parameter `orgParam`: its contacts as a FROM item named `as` (read-only joins). */
export function orgContactsSql(orgParam: string, as = 'c'): string {
  return `(SELECT * FROM contacts WHERE org_id = ${placeholder(orgParam)}) ${alias(as)}`;
}

/**
 * The org's contacts matching a customer-list or report filter, as a FROM item named `c` (read-only); the filter's
 * values are added to `params` (its SQL text has only placeholders and whitelisted columns).
 */
export function matchingContactsSql(orgParam: string, criteria: Criteria, params: unknown[]): string {
  return `(SELECT c.* FROM contacts c WHERE c.org_id = ${placeholder(orgParam)} AND ${criteriaSql(criteria, params)}) c`;
}

/**
 * For a data-modifying CTE: set the org's contacts' lead_score from relation `scores` (columns id, score), only where
 * it changes (no dead rows for unchanged contacts); returns the ids it changed (`RETURNING id`).
 */
export function setLeadScoresSql(orgParam: string, scores: string): string {
  return `UPDATE contacts t SET lead_score = s.score FROM ${alias(scores)} s
             WHERE t.org_id = ${placeholder(orgParam)} AND t.id = s.id AND t.lead_score <> s.score
             RETURNING t.id`;
}
