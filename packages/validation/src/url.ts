import { invalid } from '@crm/grpc-kit';
import { rejectNul } from './text';

/** Most characters of a stored URL (an avatar's address): what the gateway's schemas allow too. */
export const URL_MAX = 2000;
export const HTTP_URL_MESSAGE = 'must be an http or https URL (or empty)';

/**
 * An absolute http: or https: URL with a host, of at most `max` characters. Stored URLs are shown back to browsers (an
 * avatar's src, a link): javascript:, data:, file: and the like would run or read in someone else's page.
 */
export function isHttpUrl(value: string, max = URL_MAX): boolean {
  if (value.length > max) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A URL a user gave (trimmed; '' clears it): anything but http(s) is a 400 naming the field. */
export function optionalHttpUrl(value: string | undefined, field: string, max = URL_MAX): string {
  rejectNul(value, field);
  const v = (value ?? '').trim();
  if (v && !isHttpUrl(v, max)) throw invalid(field, v.length > max ? `must be at most ${max} characters` : HTTP_URL_MESSAGE);
  return v;
}

/**
 * A URL the network supplied (another service passes on what a chat network said about someone): nobody can correct
 * it, so one that is not http(s) is dropped ('') rather than refusing the data around it. `dropped` tells the caller,
 * which logs it.
 */
export function networkHttpUrl(value: string | undefined, max = URL_MAX): { url: string; dropped: boolean } {
  const v = (value ?? '').trim();
  if (!v) return { url: '', dropped: false };
  return isHttpUrl(v, max) && !v.includes('\u0000') ? { url: v, dropped: false } : { url: '', dropped: true };
}
