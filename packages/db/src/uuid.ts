const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether a value is a UUID (any case). Ids that are not UUIDs cannot exist, and a malformed one must never
 * reach a `::uuid` cast, where it would fail the query. Here, the lowest package, so @crm/db's keysets,
 * @crm/events' envelopes and @crm/validation's checks share one definition (validation re-exports it).
 */
export function isUuid(id: string | undefined | null): id is string {
  return !!id && UUID.test(id);
}
