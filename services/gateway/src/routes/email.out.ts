import type { z } from 'zod';
import type { automation } from '@crm/proto-types';
import { orNull } from '../http/shape';
import type { EmailChannel as EmailChannelOut, Suppression as SuppressionOut } from './email.schemas';

type EmailChannel = automation.EmailChannel__Output;
type Suppression = automation.Suppression__Output;

/** The channel as the settings page shows it: never a password, only whether one is stored. */
export function channelOut(c: EmailChannel): z.input<typeof EmailChannelOut> {
  const own = c.source === 'organization';
  return {
    source: c.source as z.input<typeof EmailChannelOut>['source'],
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
export function suppressionOut(s: Suppression): z.input<typeof SuppressionOut> {
  return { email: s.email, reason: s.reason, campaignId: orNull(s.campaignId), createdAt: s.createdAt };
}
