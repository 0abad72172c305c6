/**
 * A phone number as the network keys it: its digits with the country code, no `+`. The network is Vietnamese, so
 * the national spelling (a leading 0: `0912345678`) is `84` + the rest, and `+84912345678`, `84 912 345 678` and
 * `0084912345678` are one number too. Anything else keeps its digits as given.
 */
export function networkPhoneDigits(phone: string): string {
  let digits = phone.replace(/\D/g, '');
  if (digits.startsWith('00')) digits = digits.slice(2);
  else if (digits.startsWith('0')) digits = `84${digits.slice(1)}`;
  return digits;
}
