/**
 * proto3 strings arrive as "" when unset, and the services store "no value" as "" in NOT NULL text columns;
 * the HTTP API spells an absent value as null, never "" (issue #15). Each resource's mapper names its
 * optional text fields and passes them through `orNull`, so that rule lives in one place per resource.
 */
export function orNull(v: string | null | undefined): string | null {
  return v === undefined || v === null || v === '' ? null : v;
}

/** `o` with each of `keys` passed through orNull; the other fields as they are. */
export function nullIfEmpty<T extends Record<string, unknown>, K extends keyof T & string>(
  o: T,
  keys: readonly K[],
): Omit<T, K> & Record<K, string | null> {
  const out: Record<string, unknown> = { ...o };
  for (const k of keys) out[k] = orNull(o[k] as string | null | undefined);
  return out as Omit<T, K> & Record<K, string | null>;
}

/**
 * A message field of a decoded gRPC answer is null when the sender left it unset. For the fields a service always
 * sets (`what` names the call and field, e.g. "crm GetContact: contact"), a null is a broken contract between
 * services, answered as a 500 naming it rather than a TypeError somewhere in a mapper.
 */
export function answered<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`${what} is missing from the answer`);
  return value;
}
