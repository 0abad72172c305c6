import { coalescedReads, isPool, isUuid, type Queryable } from '@crm/db';

/** One table's rows of a contact, newest first by `order`: the parts of a contact's detail. */
export interface LatestOfContactSpec {
  /** The prepared statement's name (`_batch` is added for the batched one). */
  name: string;
  /** Columns of `table`, as written in a SELECT list. */
  columns: string;
  table: string;
  /** ORDER BY of the rows, newest first, ending with a unique column. */
  order: string;
}

/**
 * `(db, orgId, contactId, limit)` → the contact's latest `limit` rows. On the pool, the reads of one turn (a batch of
 * GetContact calls: grpc-kit's call-batch.ts) share one query, one LATERAL read per contact asked with its own limit,
 * each filtered on its own org; in a transaction, or for a malformed id, the single read as before.
 */
export function latestOfContact<R extends object>(spec: LatestOfContactSpec) {
  const single = async (db: Queryable, orgId: string, contactId: string, limit: number): Promise<R[]> =>
    (
      await db.query<R>({
        name: spec.name,
        text: `SELECT ${spec.columns} FROM ${spec.table} WHERE org_id = $1 AND contact_id = $2 ORDER BY ${spec.order} LIMIT $3`,
        values: [orgId, contactId, limit],
      })
    ).rows;
  interface Key {
    orgId: string;
    contactId: string;
    limit: number;
  }
  const keyOf = (k: Key) => `${k.orgId.toLowerCase()}/${k.contactId.toLowerCase()}/${k.limit}`;
  const reads = coalescedReads<Key, R[]>({
    keyOf,
    one: (db, k) => single(db, k.orgId, k.contactId, k.limit),
    many: async (db, keys) => {
      const { rows } = await db.query<R & { batch_n: string; batch_rank: string }>({
        name: `${spec.name}_batch`,
        // Inside the LATERAL read, unqualified names are the table's (the innermost scope): the spec's columns and order.
        text: `SELECT k.n AS batch_n, x.* FROM unnest($1::uuid[], $2::uuid[], $3::int[]) WITH ORDINALITY AS k(org_id, contact_id, lim, n)
               CROSS JOIN LATERAL (SELECT ${spec.columns}, row_number() OVER (ORDER BY ${spec.order}) AS batch_rank FROM ${spec.table} t
                                   WHERE t.org_id = k.org_id AND t.contact_id = k.contact_id ORDER BY ${spec.order} LIMIT k.lim) x
               ORDER BY k.n, x.batch_rank`,
        values: [keys.map((k) => k.orgId), keys.map((k) => k.contactId), keys.map((k) => k.limit)],
      });
      const out = new Map<string, R[]>();
      for (const { batch_n, batch_rank, ...row } of rows) {
        void batch_rank;
        const id = keyOf(keys[Number(batch_n) - 1]);
        const list = out.get(id);
        if (list) list.push(row as unknown as R);
        else out.set(id, [row as unknown as R]);
      }
      return out;
    },
  });
  return async (db: Queryable, orgId: string, contactId: string, limit: number): Promise<R[]> =>
    isPool(db) && isUuid(orgId) && isUuid(contactId) ? ((await reads(db, { orgId, contactId, limit })) ?? []) : single(db, orgId, contactId, limit);
}
