import { CountryCode, getCountryCallingCode, parsePhoneNumberFromString } from 'libphonenumber-js';
import { invalid } from '@crm/grpc-kit';

const PHONE_CHARS = /^\+?[0-9\s().\-/]+$/;

/**
 * One spelling per number, so "0912 345 678", "+84 912-345-678" and "0084912345678" are the same person:
 * E.164 when libphonenumber can read the number (national numbers use the default country), else the bare
 * digits (keeping a leading +) for numbers it cannot place. Empty stays empty; letters are a 400.
 */
export function normalisePhone(raw: string | undefined, defaultCountry: string, field = 'phone'): string {
  let v = (raw ?? '').trim();
  if (!v) return '';
  if (!PHONE_CHARS.test(v)) throw invalid(field, 'must be a phone number (digits, spaces, + - . ( ) only)');
  if (v.startsWith('00')) v = `+${v.slice(2)}`;
  const parsed = parsePhoneNumberFromString(v, { defaultCountry: defaultCountry as CountryCode });
  if (parsed && parsed.isPossible()) return parsed.number;
  const digits = v.replace(/\D/g, '');
  if (digits.length < 5 || digits.length > 15) throw invalid(field, 'must be a phone number of 5 to 15 digits');
  return v.startsWith('+') ? `+${digits}` : digits;
}

export interface PhoneSearch {
  /** The number as stored, when the term is a whole number. */
  exact?: string;
  /** Stored numbers starting with one of these (E.164 with the default country code, E.164, bare digits). */
  prefixes: string[];
  /** Stored numbers ending with these digits ("the last digits" people quote). */
  suffix?: string;
}

/**
 * How a search term that looks like a phone number (only digits and phone punctuation, at least 3 digits)
 * matches stored numbers: whole number, beginning in national or international spelling ("0912" finds
 * +84912..., "+8491" too), or end ("5678"). Undefined for any other term.
 */
export function phoneSearch(term: string, defaultCountry: string): PhoneSearch | undefined {
  const t = term.trim();
  if (!PHONE_CHARS.test(t)) return undefined;
  const digits = t.replace(/\D/g, '');
  if (digits.length < 3) return undefined;
  let exact: string | undefined;
  try {
    exact = normalisePhone(t, defaultCountry) || undefined;
  } catch {
    exact = undefined;
  }
  const prefixes = new Set<string>();
  if (t.startsWith('+')) prefixes.add(`+${digits}`);
  else if (digits.startsWith('00')) prefixes.add(`+${digits.slice(2)}`);
  else {
    const national = digits.replace(/^0+/, '');
    if (national) prefixes.add(`+${getCountryCallingCode(defaultCountry as CountryCode)}${national}`);
    prefixes.add(`+${digits}`);
    prefixes.add(digits);
  }
  return { exact, prefixes: [...prefixes], suffix: digits.length >= 4 ? digits : undefined };
}
