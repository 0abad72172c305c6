/**
 * Hostile requests for the gateway fuzz test, generated from a seed so a failure can be replayed
 * (FUZZ_SEED). Values are what once broke something (issue #11, item 7) and their neighbours: impossible
 * and out-of-range dates, numbers past int32 and float range, NUL and lone surrogates, wrong JSON types,
 * oversized strings and bodies, deep nesting, malformed ids.
 */

/** mulberry32: small, fast and the same sequence for the same seed on every platform. */
export function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
    chance: (p: number) => next() < p,
  };
}
export type Rng = ReturnType<typeof rng>;

/**
 * Field and query-parameter names the gateway's zod schemas use (request bodies and list filters of every
 * route module), besides those the public OpenAPI document names (learned at run time).
 */
export const KNOWN_NAMES = [
  'accessToken',
  'actions',
  'active',
  'afterLeads',
  'apiKey',
  'appointmentDate',
  'appointmentTime',
  'assignedTo',
  'assignedUserId',
  'assigneeId',
  'assignTo',
  'attachments',
  'avatar',
  'avatarUrl',
  'businessHours',
  'category',
  'chatnetAccountId',
  'chatnetMessageId',
  'chatnetUid',
  'color',
  'condition',
  'conditions',
  'contactId',
  'content',
  'contentType',
  'conversationId',
  'conversationIds',
  'criteria',
  'customFields',
  'dailyQuota',
  'dateFrom',
  'dateTo',
  'dealValue',
  'decayInterval',
  'department',
  'departmentId',
  'description',
  'dimensions',
  'direction',
  'displayName',
  'dryRun',
  'dueAt',
  'dueBefore',
  'dueInMinutes',
  'duration',
  'email',
  'enabled',
  'events',
  'eventType',
  'expireSession',
  'field',
  'fields',
  'filters',
  'folderId',
  'followers',
  'formId',
  'from',
  'fromAvatar',
  'fromName',
  'fromUid',
  'fullName',
  'groupBy',
  'hasChatnet',
  'id',
  'key',
  'keywords',
  'label',
  'leads',
  'limit',
  'listId',
  'location',
  'macroId',
  'memberIds',
  'message',
  'metrics',
  'minutes',
  'model',
  'name',
  'notes',
  'notificationType',
  'operator',
  'options',
  'orgName',
  'ownerUserId',
  'page',
  'pageId',
  'password',
  'phone',
  'position',
  'priority',
  'provider',
  'proxyUrl',
  'purge',
  'reason',
  'refreshToken',
  'role',
  'schedule',
  'scheduledAt',
  'scoreMax',
  'scoreMin',
  'scoringModel',
  'search',
  'secret',
  'seenByUid',
  'shared',
  'sla',
  'slaMinutes',
  'snoozedUntil',
  'sortBy',
  'source',
  'status',
  'statusId',
  'tag',
  'tags',
  'template',
  'templateId',
  'threadId',
  'threadType',
  'title',
  'to',
  'token',
  'trigger',
  'triggerType',
  'type',
  'unreadOnly',
  'url',
  'userId',
  'value',
  'variables',
];

/** Hostile strings for query values and string fields. */
export const HOSTILE_STRINGS = [
  '',
  ' ',
  '0',
  '-1',
  '1.5',
  '1e3',
  'NaN',
  'Infinity',
  '-0',
  'null',
  'true',
  'undefined',
  '2147483647',
  '2147483648',
  '-2147483649',
  '999999999999',
  '9007199254740993',
  '9'.repeat(400),
  '9999-99-99',
  '0000-01-01',
  '0001-01-01',
  '9999-12-31',
  '2024-02-30',
  '2024-13-01',
  '+275760-09-13T00:00:00.000Z',
  '-271821-04-20T00:00:00.000Z',
  '10000-01-01',
  '2024-05-01T25:61:00Z',
  '2024-05-01T10:00:00+99:00',
  '1970-01-01T00:00:00Z',
  'a\u0000b',
  '\u0000',
  'x\ud800y',
  '\udc00',
  '😀',
  'Nguyễn',
  "'; DROP TABLE contacts; --",
  '%',
  '%00',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '${jndi:ldap://x}',
  'a'.repeat(5000),
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'not-a-uuid',
  'http://127.0.0.1:1/',
  'javascript:alert(1)',
  '#zzzzzz',
  'day',
  'desc',
];

/** Hostile JSON values of every type for body fields. */
export function hostileValue(r: Rng, depth = 0): unknown {
  switch (r.int(depth > 2 ? 6 : 9)) {
    case 0:
      return r.pick(HOSTILE_STRINGS);
    case 1:
      return r.pick([0, -1, 1.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, 1e308, -1e308, 5e-324, 123456789012]);
    case 2:
      return r.pick([true, false, null]);
    case 3:
      return r.pick(['a'.repeat(100_000), 'x\ud800'.repeat(1000), '\u0000'.repeat(10)]);
    case 4:
      return r.pick(HOSTILE_STRINGS).toUpperCase();
    case 5:
      return {};
    case 6:
      return Array.from({ length: r.int(4) }, () => hostileValue(r, depth + 1));
    case 7:
      return Object.fromEntries(Array.from({ length: r.int(4) }, () => [r.pick(KNOWN_NAMES), hostileValue(r, depth + 1)]));
    default:
      return Array.from({ length: 2000 }, (_, i) => i);
  }
}

/** A value nested deeper than any schema reads. */
const deep = (n: number): unknown => (n === 0 ? 'bottom' : { a: [deep(n - 1)] });

/** A request body: usually an object of known field names with hostile values, sometimes not an object at all. */
export function hostileBody(r: Rng, names: string[]): string | undefined {
  switch (r.int(12)) {
    case 0:
      return undefined;
    case 1:
      return r.pick(['[]', '"text"', '42', 'null', 'true', '{', '{"a":', 'not json', '\u0000']);
    case 2:
      return JSON.stringify(deep(200));
    case 3:
      // Past BODY_LIMIT (1mb): must be a 413, never a 500.
      return JSON.stringify({ [r.pick(names)]: 'x'.repeat(1_100_000) });
    default: {
      const body: Record<string, unknown> = {};
      for (let i = 0, n = 1 + r.int(6); i < n; i++) body[r.pick(names)] = hostileValue(r);
      return JSON.stringify(body);
    }
  }
}

/** A path parameter: malformed ids, encoded NUL and traversal, huge numbers, a well-formed unknown id. */
export const HOSTILE_IDS = [
  '00000000-0000-4000-8000-000000000000',
  'nope',
  '0',
  '-1',
  '999999999999999999999',
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%25',
  '..%2F..%2Fetc',
  encodeURIComponent('x'.repeat(2000)),
  '%F0%9F%98%80',
  "'",
  'null',
];

/** encodeURIComponent, except that a lone surrogate is sent as its WTF-8 bytes (what a careless client sends). */
const encodeLoosely = (v: string) =>
  v.replace(/[\s\S]/gu, (ch) => {
    try {
      return encodeURIComponent(ch);
    } catch {
      const c = ch.charCodeAt(0);
      return [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    }
  });

export function hostileQuery(r: Rng, names: string[]): string {
  const parts: string[] = [];
  for (let i = 0, n = r.int(4); i < n; i++) {
    const name = r.pick(names);
    const value = r.pick(HOSTILE_STRINGS);
    // Sometimes a repeated parameter (an array to the parser), sometimes raw, undecodable bytes.
    if (r.chance(0.1)) parts.push(`${name}=1&${name}=2`);
    else if (r.chance(0.05)) parts.push(`${name}=%E0%A4%A`);
    else if (r.chance(0.05)) parts.push(`${name}[x]=1`);
    else parts.push(`${encodeURIComponent(name)}=${encodeLoosely(value)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

/** The route's pattern with each `:param` replaced by a hostile id (or a real one the caller supplies). */
export function fillPath(r: Rng, pattern: string, realIds: string[]): string {
  return pattern.replace(/:[A-Za-z_]+/g, () => (realIds.length && r.chance(0.3) ? r.pick(realIds) : r.pick(HOSTILE_IDS)));
}

/** Every name an OpenAPI document mentions: parameters and schema properties, anywhere in it. */
export function namesInOpenApi(doc: unknown): string[] {
  const names = new Set<string>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.name === 'string' && (o.in === 'query' || o.in === 'path')) names.add(o.name);
      if (o.properties && typeof o.properties === 'object') Object.keys(o.properties).forEach((k) => names.add(k));
      Object.values(o).forEach(walk);
    }
  };
  walk(doc);
  return [...names];
}
