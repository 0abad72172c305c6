import { placeholdersOf, render, VARIABLE_NAME } from '../text';

/**
 * What a campaign message may say: the recipient's own fields (`{{name}}`, `{{phone}}`, `{{email}}`,
 * `{{status}}`, `{{tags}}`, `{{chatnetUid}}`, also as `{{contact.name}}`...) and the campaign's
 * `variables`. A variable with a contact field's name is that field's fallback: `{"name": "bạn"}` greets
 * a contact without a name as "bạn".
 */
export const CONTACT_FIELDS = ['name', 'phone', 'email', 'status', 'tags', 'chatnetUid'] as const;
type ContactField = (typeof CONTACT_FIELDS)[number];

export type Scalar = string | number | boolean;

export interface RecipientFields {
  name: string;
  phone: string;
  email: string;
  status: string;
  tags: string[];
  chatnetUid: string;
}

function contactField(name: string): ContactField | undefined {
  const bare = name.startsWith('contact.') ? name.slice('contact.'.length) : name;
  return (CONTACT_FIELDS as readonly string[]).includes(bare) ? (bare as ContactField) : undefined;
}

/** Placeholders of `content` that neither a contact field nor a campaign variable fills. */
export function unfilledPlaceholders(content: string, variables: Record<string, Scalar>): string[] {
  return placeholdersOf(content).filter((p) => !contactField(p) && !(p in variables));
}

/** `escape` is applied to every value (not to the template): HTML-escaping for an HTML email body. */
export function renderFor(
  content: string,
  who: RecipientFields,
  variables: Record<string, Scalar>,
  escape: (v: string) => string = (v) => v,
): string {
  return render(content, (name) => {
    const field = contactField(name);
    if (field) {
      const v = field === 'tags' ? who.tags.join(', ') : who[field];
      if (v) return escape(v);
    }
    const given = variables[name];
    return given === undefined ? undefined : escape(String(given));
  });
}

export const VARIABLE_LIMITS = { count: 50, value: 1000 };

/**
 * The campaign's `variables` object: names like placeholders (`code`, `shop.name`), values strings,
 * numbers or booleans. Returns the problem as [field, message] for a 400 naming `variables.<name>`.
 */
export function variablesProblem(v: unknown): [string, string] | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return ['variables', 'must be an object of name → value'];
  const entries = Object.entries(v);
  if (entries.length > VARIABLE_LIMITS.count) return ['variables', `must have at most ${VARIABLE_LIMITS.count} variables`];
  for (const [k, val] of entries) {
    if (!VARIABLE_NAME.test(k)) return [`variables.${k}`, 'is not a valid variable name (letters, digits, _ and dots)'];
    if (typeof val === 'number' ? !Number.isFinite(val) : typeof val !== 'string' && typeof val !== 'boolean') {
      return [`variables.${k}`, 'must be a string, number or boolean'];
    }
    if (String(val).length > VARIABLE_LIMITS.value) return [`variables.${k}`, `must be at most ${VARIABLE_LIMITS.value} characters`];
  }
  return undefined;
}
