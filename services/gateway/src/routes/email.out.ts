import type { automation } from '@crm/proto-types';
import { orNull } from '../http/shape';

type EmailChannel = automation.EmailChannel__Output;
type Suppression = automation.Suppression__Output;

/** The channel as the settings page shows it: never a password, only whether one is stored. */
export function channelOut(c: EmailChannel) {
  const own = c.source === 'organization';
  return {
    source: c.source,
    configured: c.source !== 'none',
    host: own ? c.host : null,
    port: own ? c.port : null,
    secure: own ? c.secure : null,
    user: own ? c.user : null,
    passwordSet: c.passwordSet,
    fromAddress: own ? c.fromAddress : null,
    fromName: own ? c.fromName : null,
    updatedAt: c.updatedAt ?? null,
  };
}

/** An address that will not be emailed; campaignId is null when it was not a campaign's unsubscribe link. */
export function suppressionOut(s: Suppression) {
  return { email: s.email, reason: s.reason, campaignId: orNull(s.campaignId), createdAt: s.createdAt };
}
