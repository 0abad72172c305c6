import { invalid } from '@crm/grpc-kit';
import type { OrgUser, RemoteClients } from '../clients';
import { isUuid } from '@crm/validation';

/**
 * Mentions in a private note: `@[user:<id>]` (what a client's user picker inserts) and `@name@domain` (typed by
 * hand). Parsing is pure; resolving asks identity, which answers only for the caller's organization, so another
 * org's id or email resolves to nothing, like an unknown one: a mention is a courtesy, never an error.
 */
export type MentionToken = { kind: 'id'; value: string } | { kind: 'email'; value: string };

/** One note names at most this many different users or addresses: each costs a call to identity. */
export const MAX_MENTIONS = 50;

// `@[user:<anything>]`; the id is checked afterwards, so `@[user:42]` is simply not a mention.
const BY_ID = /@\[user:([^\]\s]{1,64})\]/g;
// `@` + an address, not preceded by a word character or another `@` (so `a@b.co` itself is no mention). The
// domain needs a dot and ends on a letter or digit, so a sentence's final period is not taken in.
const BY_EMAIL = /(?<![\w@.])@([\w.%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)/g;

/** The different mentions of a text in order of first appearance (ids and emails lower-cased). */
export function parseMentions(content: string): MentionToken[] {
  const found: Array<{ at: number; token: MentionToken }> = [];
  for (const m of content.matchAll(BY_ID)) {
    if (isUuid(m[1])) found.push({ at: m.index, token: { kind: 'id', value: m[1].toLowerCase() } });
  }
  for (const m of content.matchAll(BY_EMAIL)) found.push({ at: m.index, token: { kind: 'email', value: m[1].toLowerCase() } });
  found.sort((a, b) => a.at - b.at);
  const seen = new Set<string>();
  const out: MentionToken[] = [];
  for (const { token } of found) {
    const key = `${token.kind}:${token.value}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(token);
  }
  return out;
}

export interface ResolvedMentions {
  /** User ids of the org, each once, in order of first mention. */
  userIds: string[];
  /** Every resolved user by id (for showing names). */
  users: Map<string, OrgUser>;
}

/** Resolve mentions to active users of the caller's organization; the rest are ignored. */
export async function resolveMentions(
  remote: RemoteClients,
  ctx: { orgId: string; userId: string; requestId: string },
  content: string,
): Promise<ResolvedMentions> {
  const tokens = parseMentions(content);
  if (tokens.length > MAX_MENTIONS) throw invalid('content', `may mention at most ${MAX_MENTIONS} different users`);
  const found = await Promise.all(tokens.map((t) => (t.kind === 'id' ? remote.orgUser(ctx, t.value) : remote.orgUserByEmail(ctx, t.value))));
  const users = new Map<string, OrgUser>();
  for (const u of found) {
    // An inactive user cannot sign in to read the note: not notified, not listed.
    if (u && u.status === 'active' && !users.has(u.id)) users.set(u.id, u);
  }
  return { userIds: [...users.keys()], users };
}

/** A short plain preview of a note for events and notifications: id mentions shown as `@Full Name`. */
export function previewOf(content: string, users: Map<string, OrgUser>, max = 200): string {
  const named = content.replace(BY_ID, (whole, id: string) => {
    const u = users.get(id.toLowerCase());
    return u ? `@${u.fullName}` : whole;
  });
  const flat = named.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
