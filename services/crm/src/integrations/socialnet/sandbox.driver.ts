import { randomBytes, randomInt } from 'node:crypto';
import type { Pool } from '@crm/db';
import { authExpired, gone, LeadPage, PageAccess, SocialnetCredentials, SocialnetDriver, SocialnetForm, SocialnetPage, unavailable } from './driver';
import * as net from './sandbox.repo';

/** Network-style ids: 15 digits, like the page and form ids of the big networks. */
export function networkId(): string {
  return `${randomInt(1, 10)}${String(randomInt(0, 1e7)).padStart(7, '0')}${String(randomInt(0, 1e7)).padStart(7, '0')}`;
}

/** Page tokens look like a network's: opaque, long, random. */
export function networkToken(): string {
  return `SNP${randomBytes(24).toString('base64url')}`;
}

/**
 * The simulated social network (SOCIALNET_DRIVER=sandbox). Its pages, forms and leads are rows in crm's own
 * database (socialnet_sandbox_*), seeded through the sandbox control API, so they survive restarts. It behaves
 * like the real thing where it matters to a sync: pages visible per organization, a token per page that the
 * network can revoke (auth expired), cursor paging of leads, and an outage switch (unavailable).
 */
export class SandboxSocialnet implements SocialnetDriver {
  readonly name = 'sandbox' as const;

  constructor(private readonly pool: Pool) {}

  async listPages(credentials: SocialnetCredentials): Promise<SocialnetPage[]> {
    const rows = await net.pagesOf(this.pool, credentials.orgId);
    return rows.map((r) => ({ id: r.id, name: r.name, followers: r.followers, accessToken: r.access_token }));
  }

  async listForms(page: PageAccess): Promise<SocialnetForm[]> {
    await this.checkedPage(page);
    const rows = await net.formsOf(this.pool, page.orgId, page.id);
    return rows.map((r) => ({ id: r.id, pageId: r.page_id, name: r.name, leadCount: r.lead_count }));
  }

  async fetchLeads(page: PageAccess, formId: string, cursor: string | null, limit: number): Promise<LeadPage> {
    const p = await this.checkedPage(page);
    const form = await net.findForm(this.pool, page.orgId, formId);
    if (!form || form.page_id !== p.id) throw gone('The lead form');
    const after = cursor && /^\d{1,18}$/.test(cursor) ? Number(cursor) : 0;
    let take = limit;
    if (p.outage_after !== null) {
      const served = after > 0 ? await net.leadsUpTo(this.pool, page.orgId, formId, after) : 0;
      if (served >= p.outage_after) throw unavailable('The social network is unavailable (sandbox outage)');
      take = Math.min(take, p.outage_after - served);
    }
    // One extra row tells whether another page follows.
    const rows = await net.leadsAfter(this.pool, page.orgId, formId, after, take + 1);
    const leads = rows.slice(0, take);
    const more = rows.length > take;
    return {
      leads: leads.map((r) => ({
        id: r.lead_id,
        formId: r.form_id,
        createdAt: r.created_at,
        fullName: r.data.fullName ?? '',
        phone: r.data.phone ?? '',
        email: r.data.email ?? '',
        fields: r.data.fields ?? {},
      })),
      next: more && leads.length > 0 ? String(leads[leads.length - 1].seq) : null,
    };
  }

  /** The page as the network sees it, refusing a token it no longer accepts. */
  private async checkedPage(page: PageAccess) {
    const row = await net.findPage(this.pool, page.orgId, page.id);
    if (!row) throw gone('The page');
    if (row.access_token !== page.accessToken) throw authExpired();
    return row;
  }
}
