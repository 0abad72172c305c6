import { invalid } from '@crm/grpc-kit';

/** An org's SMTP channel (PUT /settings/email): the limits of each setting and the port's range. */
export const SMTP_HOST_MAX = 253;
export const SMTP_USER_MAX = 320;
export const SMTP_PASSWORD_MAX = 1000;
export const SMTP_FROM_ADDRESS_MAX = 320;
export const SMTP_FROM_NAME_MAX = 200;
export const SMTP_PORT_MESSAGE = 'must be a whole number from 1 to 65535';

/** The port to dial: a whole number from 1 to 65535. */
export function smtpPort(value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > 65_535) throw invalid('port', SMTP_PORT_MESSAGE);
  return value;
}
