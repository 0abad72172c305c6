import { matchingContactsSql } from '../contacts';
import { Dimension, MESSAGE_METRICS, Metric, ReportSpec } from './report-request';

/**
 * One GROUP BY statement per report, whatever the organization's size: PostgreSQL aggregates, Node only
 * formats the (capped) result rows. Contact metrics aggregate the contacts created in the range (index
 * contacts_created_at_idx); message metrics aggregate the message activities of the range (partial index
 * contact_activities_messages_idx) joined to their contacts. Both parts produce the same columns and are
 * summed per dimension key, so a group with contacts but no messages (or the reverse) is one row.
 * Only whitelisted expressions reach the SQL text; the org, the range and every filter value are parameters.
 * The contacts come from the contacts module's face (matchingContactsSql: the org's contacts matching the filters, as
 * a FROM item PostgreSQL flattens into the statement), which alone names the table.
 */

/** A dimension's SQL over contact `c`, with `at` the time a time bucket is taken from (UTC). */
function dimensionSql(d: Dimension, at: string): string {
  switch (d) {
    case 'source':
      return 'c.source';
    case 'status':
      return 'c.status';
    case 'assignedUser':
      return 'c.assigned_user_id';
    case 'day':
      return `to_char(date_trunc('day', ${at} AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`;
    case 'week':
      // ISO weeks start on Monday; the bucket is named by its Monday.
      return `to_char(date_trunc('week', ${at} AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`;
    case 'month':
      return `to_char(date_trunc('month', ${at} AT TIME ZONE 'UTC'), 'YYYY-MM')`;
  }
}

/** Each metric from the summed base columns; numeric arithmetic, so decimals are exact. */
const METRIC_SQL: Record<Metric, string> = {
  lead_count: 'sum(u.leads)',
  customer_count: 'sum(u.customers)',
  conversion_rate: 'round(100.0 * sum(u.customers) / NULLIF(sum(u.leads), 0), 2)',
  revenue: 'round(sum(u.revenue), 2)',
  average_deal_value: 'round(sum(u.revenue) / NULLIF(sum(u.customers), 0), 2)',
  messages_received: 'sum(u.received)',
  messages_sent: 'sum(u.sent)',
};

export interface ReportQuery {
  text: string;
  values: unknown[];
}

export function reportQuery(orgId: string, spec: ReportSpec): ReportQuery {
  const values: unknown[] = [orgId, spec.from, spec.to];
  const dims = (at: string) => spec.dimensions.map((d, i) => `${dimensionSql(d, at)} AS d${i}`);
  const groupBy = spec.dimensions.length ? `GROUP BY ${spec.dimensions.map((_, i) => i + 1).join(', ')}` : '';
  const parts: string[] = [];

  if (spec.metrics.some((m) => !MESSAGE_METRICS.includes(m))) {
    parts.push(`SELECT ${[
      ...dims('c.created_at'),
      'count(*) AS leads',
      "count(*) FILTER (WHERE c.status = 'customer') AS customers",
      "COALESCE(sum(c.deal_value) FILTER (WHERE c.status = 'customer'), 0) AS revenue",
      '0::bigint AS received',
      '0::bigint AS sent',
    ].join(', ')}
      FROM ${matchingContactsSql('$1', { filters: spec.filters }, values)}
      WHERE c.created_at >= $2::timestamptz AND c.created_at < $3::timestamptz
      ${groupBy}`);
  }
  if (spec.metrics.some((m) => MESSAGE_METRICS.includes(m))) {
    parts.push(`SELECT ${[
      ...dims('a.occurred_at'),
      '0::bigint AS leads',
      '0::bigint AS customers',
      '0::numeric AS revenue',
      "count(*) FILTER (WHERE a.type = 'message_received') AS received",
      "count(*) FILTER (WHERE a.type = 'message_sent') AS sent",
    ].join(', ')}
      FROM contact_activities a JOIN ${matchingContactsSql('$1', { filters: spec.filters }, values)} ON c.id = a.contact_id
      WHERE a.org_id = $1 AND a.type IN ('message_received', 'message_sent')
        AND a.occurred_at >= $2::timestamptz AND a.occurred_at < $3::timestamptz
      ${groupBy}`);
  }

  const keys = spec.dimensions.map((_, i) => `u.d${i}`);
  // Byte order for text ("-promo" before "manual" whatever the database's collation); ids by value.
  const order = spec.dimensions.map((d, i) => `${keys[i]}${d === 'assignedUser' ? '' : ' COLLATE "C"'} NULLS LAST`);
  // As text: @crm/db parses numeric into a JS number, which would drop the 2 decimals ("300.00" → 300).
  const metrics = spec.metrics.map((m, i) => `(${METRIC_SQL[m]})::text AS m${i}`);
  const text = `SELECT ${[...keys, ...metrics].join(', ')}
    FROM (${parts.join('\n      UNION ALL\n      ')}) u
    ${keys.length ? `GROUP BY ${keys.join(', ')} ORDER BY ${order.join(', ')}` : ''}`;
  return { text, values };
}
