/**
 * What crm needs from the social network. One implementation per network: `sandbox` (simulated, the
 * default, its data in crm's own tables) and `graph` (a Graph-API-style HTTP network). A driver only talks
 * to the network: it never touches our integrations, syncs or contacts.
 */

/** Whose view of the network: the org (the sandbox scopes its pages by it) and, for HTTP networks, its user token. */
export interface SocialnetCredentials {
  orgId: string;
  userAccessToken?: string;
}

export interface SocialnetPage {
  id: string;
  name: string;
  followers: number;
  /** The page access token the network hands out with the page; stored encrypted when connected. */
  accessToken: string;
}

/** A page as a later call addresses it: its id and the token we hold for it. */
export interface PageAccess {
  orgId: string;
  id: string;
  accessToken: string;
}

export interface SocialnetForm {
  id: string;
  pageId: string;
  name: string;
  leadCount: number;
}

export interface SocialnetLead {
  id: string;
  formId: string;
  createdAt: Date;
  fullName: string;
  phone: string;
  email: string;
  /** The form's other questions and answers. */
  fields: Record<string, string>;
}

export interface LeadPage {
  leads: SocialnetLead[];
  /** Where the next page starts; null on the last page. Opaque to callers. */
  next: string | null;
}

export interface SocialnetDriver {
  readonly name: 'sandbox' | 'graph';
  listPages(credentials: SocialnetCredentials): Promise<SocialnetPage[]>;
  listForms(page: PageAccess): Promise<SocialnetForm[]>;
  /** One page of a form's leads, from `cursor` (null: the beginning), at most `limit` of them. */
  fetchLeads(page: PageAccess, formId: string, cursor: string | null, limit: number): Promise<LeadPage>;
}

/**
 * Typed failures a driver reports. auth_expired: the token no longer works (reconnect the page);
 * rate_limited: wait `retryAfterMs`; unavailable: the network is down or slow (retry later);
 * not_found: the page or form no longer exists on the network.
 */
export type SocialnetErrorKind = 'auth_expired' | 'rate_limited' | 'unavailable' | 'not_found';

export class SocialnetError extends Error {
  constructor(
    readonly kind: SocialnetErrorKind,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'SocialnetError';
  }

  /** Worth another attempt later; the others end a sync. */
  get retryable(): boolean {
    return this.kind === 'rate_limited' || this.kind === 'unavailable';
  }
}

export const authExpired = (message = 'The page access token is no longer valid; connect the page again') =>
  new SocialnetError('auth_expired', message);
export const unavailable = (message = 'The social network is unavailable') => new SocialnetError('unavailable', message);
export const rateLimited = (retryAfterMs: number) => new SocialnetError('rate_limited', 'The social network asks us to slow down', retryAfterMs);
export const gone = (what: string) => new SocialnetError('not_found', `${what} no longer exists on the social network`);
