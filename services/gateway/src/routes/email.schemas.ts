import { z } from 'zod';
import { automationRules as rules } from '@crm/validation';
import { nulls, proto } from '../docs/proto-schema';
import { byRule } from '../http/by-rule';

const text = (max: number) => z.string({ error: 'must be a string' }).max(max, `must be at most ${max} characters`);

export const ChannelBody = z.object({
  host: text(rules.SMTP_HOST_MAX).optional(),
  port: byRule(z.number({ error: rules.SMTP_PORT_MESSAGE }), rules.smtpPort).optional(),
  secure: z.boolean({ error: 'must be true or false' }).optional(),
  user: text(rules.SMTP_USER_MAX).optional(),
  // Write-only: omitted keeps the stored password (for the same host); '' removes it.
  password: text(rules.SMTP_PASSWORD_MAX).optional(),
  fromAddress: text(rules.SMTP_FROM_ADDRESS_MAX).optional(),
  fromName: text(rules.SMTP_FROM_NAME_MAX).optional(),
});

export const TestBody = z.object({ to: z.string({ error: 'is required' }).max(320, 'must be at most 320 characters') });

/** The email channel as the settings page shows it (email.out channelOut): never a password. */
export const EmailChannel = z.object({
  source: z.enum(['organization', 'server', 'none']).meta({ description: 'the organization’s own SMTP server, the deployment’s SMTP_URL, or none' }),
  configured: z.boolean(),
  host: z.string().nullable().meta({ description: 'null unless source is organization (likewise port, secure, user, fromAddress, fromName)' }),
  port: z.number().int().nullable(),
  secure: z.boolean().nullable(),
  user: z.string().nullable(),
  passwordSet: z.boolean(),
  fromAddress: z.string().nullable(),
  fromName: z.string().nullable(),
  updatedAt: z.string().nullable(),
});

/** email.out suppressionOut: no campaign (not a campaign's link) is null. */
export const Suppression = nulls(proto('automation/v1/automation.proto', 'automation.v1.Suppression'), ['campaignId']);

export const TestDelivered = z.object({ delivered: z.literal(true) });

/** POST /u/:token's answer to a mail client (RFC 8058 one-click); a browser gets a page. */
export const Unsubscribed = z.object({ unsubscribed: z.literal(true) });
