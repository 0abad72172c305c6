/**
 * Personal data kept from outside AI providers (issue #32 item 6, `AI_REDACT_PII`): phone numbers (Vietnamese
 * `0901 234 567`, `+84 901 234 567`, `84901234567`, and international `+1 415 555 0100`), email addresses and
 * identity numbers (Vietnamese CMND of 9 digits, CCCD of 12) are replaced by placeholders such as `[PHONE_1]` before a
 * prompt leaves, and put back into the answer. The same value gets the same placeholder throughout one prompt, so a
 * model that repeats a number repeats its placeholder.
 */
export type PiiKind = 'PHONE' | 'EMAIL' | 'ID';

/** The placeholders of one prompt and the values they stand for: kept in memory for one call only. */
export class PiiVault {
  private readonly byValue = new Map<string, string>();
  private readonly byPlaceholder = new Map<string, string>();
  private readonly counts: Record<PiiKind, number> = { PHONE: 0, EMAIL: 0, ID: 0 };

  placeholderFor(kind: PiiKind, value: string): string {
    const key = `${kind}\n${value}`;
    let found = this.byValue.get(key);
    if (!found) {
      found = `[${kind}_${++this.counts[kind]}]`;
      this.byValue.set(key, found);
      this.byPlaceholder.set(found, value);
    }
    return found;
  }

  /** How many values were hidden. */
  get size(): number {
    return this.byPlaceholder.size;
  }

  valueOf(placeholder: string): string | undefined {
    return this.byPlaceholder.get(placeholder);
  }
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;

/**
 * A run of digits that may be a phone or ID number: an optional `+`, then digits with single spaces, dots, dashes or
 * brackets between them, not glued to letters or other digits. What it is is decided on its digits (kindOfNumber).
 */
const NUMBER_RUN = /(?<![\p{L}\p{N}_+])\+?\(?\d(?:\)?[ .\-]?\(?\d){7,16}(?![\p{L}\p{N}_])/gu;

/**
 * Phone when it starts with `+` (8 to 15 digits, E.164), or is a Vietnamese number: 10 digits (11 for the old
 * landlines) starting with 0, or the same after the country code 84. ID when it is a bare run of exactly 9 or 12
 * digits (CMND, CCCD). Anything else (prices `15.000.000`, dates, order numbers of other lengths) is left alone.
 */
export function kindOfNumber(run: string): PiiKind | undefined {
  const digits = run.replace(/\D/g, '');
  if (run.startsWith('+')) return digits.length >= 8 && digits.length <= 15 ? 'PHONE' : undefined;
  if (/^0[1-9]\d{8,9}$/.test(digits)) return 'PHONE';
  if (/^84[1-9]\d{8,9}$/.test(digits)) return 'PHONE';
  if (/^\d+$/.test(run) && (digits.length === 9 || digits.length === 12)) return 'ID';
  return undefined;
}

/** `text` with every email, phone and ID number replaced by its placeholder in `vault`. */
export function redact(text: string, vault: PiiVault): string {
  const noEmails = text.replace(EMAIL, (m) => vault.placeholderFor('EMAIL', m));
  return noEmails.replace(NUMBER_RUN, (m) => {
    const kind = kindOfNumber(m);
    return kind ? vault.placeholderFor(kind, m) : m;
  });
}

/** A placeholder as a model may write it back: `[PHONE_1]`, also `[phone_1]` or `[PHONE 1]`. */
const PLACEHOLDER = /\[(PHONE|EMAIL|ID)[_ ](\d{1,4})\]/gi;

/** `text` with the placeholders of `vault` replaced by the values they hid; unknown ones stay as they are. */
export function restore(text: string, vault: PiiVault): string {
  if (vault.size === 0) return text;
  return text.replace(PLACEHOLDER, (m, kind: string, n: string) => vault.valueOf(`[${kind.toUpperCase()}_${Number(n)}]`) ?? m);
}

/** Told to the model with a redacted prompt, so it keeps the placeholders rather than inventing values. */
export const PLACEHOLDER_NOTE =
  'Personal data in the text was replaced by placeholders such as [PHONE_1], [EMAIL_1] and [ID_1]; when your answer ' +
  'needs one of them, copy the placeholder exactly as written.';
