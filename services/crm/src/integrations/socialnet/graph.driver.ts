import {
  authExpired,
  gone,
  LeadPage,
  PageAccess,
  rateLimited,
  SocialnetCredentials,
  SocialnetDriver,
  SocialnetError,
  SocialnetForm,
  SocialnetLead,
  SocialnetPage,
  unavailable,
} from './driver';

export interface GraphOptions {
  /** e.g. https://graph.socialnet.example/v19.0 (no trailing slash needed). */
  baseUrl: string;
  /** Per request; past it the network counts as unavailable and the sync retries later. */
  timeoutMs: number;
  fetch?: typeof fetch;
}

/** Pages of a listing followed at most (100 items each): a bound against a network that never stops paging. */
const MAX_LIST_PAGES = 20;
const LIST_LIMIT = 100;
/** When a 429 or throttling error gives no Retry-After. */
const DEFAULT_RETRY_AFTER_MS = 60_000;
/** Graph error codes: 190 invalid/expired token, 102 session, 10 and 200-299 permission missing, 4/17/32/613/80001 throttling, 803 unknown object. */
const AUTH_CODES = new Set([10, 102, 190]);
const THROTTLE_CODES = new Set([4, 17, 32, 613, 80001]);

interface GraphError {
  error?: { message?: string; code?: number; error_subcode?: number };
}
interface Paged<T> {
  data?: T[];
  paging?: { cursors?: { after?: string }; next?: string };
}
interface GraphLead {
  id: string;
  created_time?: string;
  field_data?: { name: string; values?: string[] }[];
}

/** Lead form questions the network names in several ways; the rest of the answers become `fields`. */
const NAME_KEYS = ['full_name', 'name'];
const PHONE_KEYS = ['phone_number', 'phone'];
const EMAIL_KEYS = ['email'];

export function leadFromGraph(l: GraphLead, formId: string): SocialnetLead {
  const answers = new Map<string, string>();
  for (const f of l.field_data ?? []) answers.set(f.name, (f.values ?? []).join(', '));
  const take = (keys: string[]) => {
    for (const k of keys) {
      const v = answers.get(k);
      if (v !== undefined) {
        answers.delete(k);
        return v;
      }
    }
    return '';
  };
  let fullName = take(NAME_KEYS);
  const first = answers.get('first_name');
  const last = answers.get('last_name');
  if (!fullName && (first || last)) {
    fullName = [first, last].filter(Boolean).join(' ');
    answers.delete('first_name');
    answers.delete('last_name');
  }
  const created = l.created_time ? new Date(l.created_time) : new Date();
  return {
    id: String(l.id),
    formId,
    createdAt: Number.isNaN(created.getTime()) ? new Date() : created,
    fullName,
    phone: take(PHONE_KEYS),
    email: take(EMAIL_KEYS),
    fields: Object.fromEntries(answers),
  };
}

/**
 * A Graph-API-style social network over HTTPS (SOCIALNET_DRIVER=graph): pages from /me/accounts with the
 * org's user token (each with its page token), forms from /{page}/leadgen_forms and leads from
 * /{form}/leads with cursor paging, all with the page token. Tokens travel in the Authorization header,
 * never in URLs (which end up in proxies' logs). Failures are mapped to the driver's typed errors.
 */
export class GraphSocialnet implements SocialnetDriver {
  readonly name = 'graph' as const;
  private readonly base: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly o: GraphOptions) {
    this.base = o.baseUrl.replace(/\/+$/, '');
    this.fetch = o.fetch ?? fetch;
  }

  async listPages(credentials: SocialnetCredentials): Promise<SocialnetPage[]> {
    if (!credentials.userAccessToken)
      throw authExpired('No social-network user token is set for the organization (PUT /api/v1/integrations/socialnet/credentials)');
    type Row = { id: string; name?: string; followers_count?: number; fan_count?: number; access_token?: string };
    const rows = await this.all<Row>('/me/accounts', { fields: 'id,name,followers_count,fan_count,access_token' }, credentials.userAccessToken);
    return rows.map((r) => ({
      id: String(r.id),
      name: r.name ?? '',
      followers: Number(r.followers_count ?? r.fan_count ?? 0) || 0,
      accessToken: r.access_token ?? '',
    }));
  }

  async listForms(page: PageAccess): Promise<SocialnetForm[]> {
    type Row = { id: string; name?: string; leads_count?: number };
    const rows = await this.all<Row>(`/${encodeURIComponent(page.id)}/leadgen_forms`, { fields: 'id,name,leads_count' }, page.accessToken);
    return rows.map((r) => ({ id: String(r.id), pageId: page.id, name: r.name ?? '', leadCount: Number(r.leads_count ?? 0) || 0 }));
  }

  async fetchLeads(page: PageAccess, formId: string, cursor: string | null, limit: number): Promise<LeadPage> {
    const params: Record<string, string> = { fields: 'id,created_time,field_data', limit: String(limit) };
    if (cursor) params.after = cursor;
    const body = await this.get<Paged<GraphLead>>(`/${encodeURIComponent(formId)}/leads`, params, page.accessToken);
    const after = body.paging?.cursors?.after;
    return { leads: (body.data ?? []).map((l) => leadFromGraph(l, formId)), next: body.paging?.next && after ? after : null };
  }

  /** Every item of a listing, following `after` cursors. */
  private async all<T>(path: string, params: Record<string, string>, token: string): Promise<T[]> {
    const out: T[] = [];
    let after: string | undefined;
    for (let i = 0; i < MAX_LIST_PAGES; i++) {
      const body = await this.get<Paged<T>>(path, { ...params, limit: String(LIST_LIMIT), ...(after ? { after } : {}) }, token);
      out.push(...(body.data ?? []));
      after = body.paging?.cursors?.after;
      if (!body.paging?.next || !after) break;
    }
    return out;
  }

  private async get<T>(path: string, params: Record<string, string>, token: string): Promise<T> {
    const url = `${this.base}${path}?${new URLSearchParams(params)}`;
    let res: Response;
    try {
      res = await this.fetch(url, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        signal: AbortSignal.timeout(this.o.timeoutMs),
        redirect: 'error',
      });
    } catch {
      throw unavailable('The social network did not answer');
    }
    const text = await res.text().catch(() => '');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : {};
    } catch {
      body = undefined;
    }
    if (res.ok && body !== undefined && !(body as GraphError).error) return body as T;
    throw this.failure(res, body as GraphError | undefined);
  }

  private failure(res: Response, body: GraphError | undefined): SocialnetError {
    const code = body?.error?.code;
    const message = body?.error?.message ? `The social network said: ${body.error.message}` : `The social network answered HTTP ${res.status}`;
    if (res.status === 401 || (code !== undefined && (AUTH_CODES.has(code) || (code >= 200 && code < 300)))) return authExpired(message);
    if (res.status === 429 || (code !== undefined && THROTTLE_CODES.has(code))) {
      const seconds = Number(res.headers.get('retry-after'));
      return rateLimited(Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : DEFAULT_RETRY_AFTER_MS);
    }
    if (res.status === 404 || code === 803) return gone('The page or lead form');
    return unavailable(message);
  }
}
