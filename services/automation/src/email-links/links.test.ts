import { randomUUID } from 'node:crypto';
import { LinkSigner } from './links';

describe('email link tokens', () => {
  const who = { orgId: randomUUID(), email: 'Lan@Example.test', campaignId: randomUUID(), contactId: randomUUID() };
  const signer = new LinkSigner(['k'.repeat(44)]);

  it('a token names its recipient and verifies only for its own purpose, address and org', () => {
    const token = signer.sign('unsubscribe', who);
    const parsed = LinkSigner.parse(token)!;
    expect(parsed).toEqual(expect.objectContaining({ campaignId: who.campaignId, contactId: who.contactId }));
    expect(signer.verify('unsubscribe', { ...who, email: 'lan@example.test' }, parsed.mac)).toBe(true);
    expect(signer.verify('open', who, parsed.mac)).toBe(false);
    expect(signer.verify('unsubscribe', { ...who, email: 'other@example.test' }, parsed.mac)).toBe(false);
    expect(signer.verify('unsubscribe', { ...who, orgId: randomUUID() }, parsed.mac)).toBe(false);
    expect(new LinkSigner(['another key']).verify('unsubscribe', who, parsed.mac)).toBe(false);
  });

  it('links signed under a former key still verify after rotation; garbage does not parse', () => {
    const token = signer.sign('open', who);
    const rotated = LinkSigner.fromEnv('new key', `1:${'k'.repeat(44)}`);
    expect(rotated.verify('open', who, LinkSigner.parse(token)!.mac)).toBe(true);
    expect(LinkSigner.parse('not-a-token')).toBeUndefined();
    expect(LinkSigner.parse(`${token.slice(0, 63)}*`)).toBeUndefined();
  });
});
