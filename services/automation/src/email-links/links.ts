import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The public links of a campaign email: `/u/<token>` (unsubscribe) and `/o/<token>.gif` (open pixel). A token
 * names the recipient (campaign and contact id) and carries an HMAC over purpose, org, address, campaign and
 * contact, so it cannot be forged, moved to another address or org, or used for the other purpose. The HMAC
 * key is derived from ENCRYPTION_KEY by a label (the way internal keys are derived from their seed), so no
 * new secret has to be deployed; former keys (ENCRYPTION_KEYS_OLD) still verify links already sent.
 */
export type LinkPurpose = 'unsubscribe' | 'open';

const MAC_BYTES = 16;
const TOKEN_BYTES = 16 + 16 + MAC_BYTES;

export interface LinkSubject {
  orgId: string;
  email: string;
  campaignId: string;
  contactId: string;
}

export class LinkSigner {
  private readonly keys: Buffer[];

  /** `secrets`: the current ENCRYPTION_KEY first, then former ones. */
  constructor(secrets: string[]) {
    this.keys = secrets.filter(Boolean).map((s) => createHmac('sha256', s).update('automation:email-links:v1').digest());
    if (this.keys.length === 0) throw new Error('LinkSigner needs a secret');
  }

  static fromEnv(current: string, old: string): LinkSigner {
    const former = old
      .split(',')
      .filter(Boolean)
      .map((part) => part.slice(part.indexOf(':') + 1));
    return new LinkSigner([current, ...former]);
  }

  private mac(key: Buffer, purpose: LinkPurpose, s: LinkSubject): Buffer {
    const text = [purpose, s.orgId, s.email.trim().toLowerCase(), s.campaignId, s.contactId].join('\n');
    return createHmac('sha256', key).update(text).digest().subarray(0, MAC_BYTES);
  }

  sign(purpose: LinkPurpose, s: LinkSubject): string {
    const body = Buffer.concat([uuidBytes(s.campaignId), uuidBytes(s.contactId), this.mac(this.keys[0], purpose, s)]);
    return body.toString('base64url');
  }

  /** Which recipient a token claims to be, before it is checked against the recipient's row. */
  static parse(token: string): { campaignId: string; contactId: string; mac: Buffer } | undefined {
    if (!/^[A-Za-z0-9_-]{64}$/.test(token)) return undefined;
    const raw = Buffer.from(token, 'base64url');
    if (raw.length !== TOKEN_BYTES) return undefined;
    return { campaignId: uuidOf(raw.subarray(0, 16)), contactId: uuidOf(raw.subarray(16, 32)), mac: raw.subarray(32) };
  }

  /** Whether `mac` was made for this purpose and recipient by any of our keys (constant-time per key). */
  verify(purpose: LinkPurpose, s: LinkSubject, mac: Buffer): boolean {
    return this.keys.some((k) => timingSafeEqual(this.mac(k, purpose, s), mac));
  }
}

function uuidBytes(id: string): Buffer {
  return Buffer.from(id.replace(/-/g, ''), 'hex');
}

function uuidOf(b: Buffer): string {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function unsubscribeUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/u/${token}`;
}

export function pixelUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/o/${token}.gif`;
}
